// kasava's search page: searches as you type through /api/search, groups the results by
// repository and file, opens the lines around a result through /api/file, and asks for a
// token when the server answers 401. Everything from the server is untrusted text: it
// reaches the page only through textContent and text nodes, never as HTML.
'use strict';

(() => {
  const k_debounce_ms = 150;
  const k_limit = 30;
  const k_snippet_lines = 8;    // lines of a result shown before it is opened
  const k_context_lines = 6;    // lines above and below a result when it is opened
  const k_max_open_lines = 400; // a very long definition opens at its start
  const k_token_key = 'kasava.token';

  const $ = (id) => document.getElementById(id);
  const box = $('q');
  const form = $('search');
  const lang = $('lang');
  const pathFilter = $('path');
  const repo = $('repo');
  const mode = $('mode');
  const statusLine = $('status');
  const resultsEl = $('results');
  const tokenForm = $('token-form');
  const tokenInput = $('token');
  const tokenError = $('token-error');

  let timer = 0;
  let inflight = null;   // the AbortController of the search in flight
  let generation = 0;    // increases with every search started; stale answers are dropped
  let items = [];        // the result elements, in display order
  let selected = -1;     // index into items, -1 when none
  let statusLoaded = false;
  let servedRepository = ''; // /api/status's name for a server of one repository

  class AuthNeeded extends Error {}

  // --- the server ----------------------------------------------------------------------

  function storedToken() {
    try { return sessionStorage.getItem(k_token_key) || ''; } catch { return ''; }
  }
  function storeToken(value) {
    try {
      if (value) sessionStorage.setItem(k_token_key, value);
      else sessionStorage.removeItem(k_token_key);
    } catch { /* storage disabled: the token lives until the next 401 */ }
  }

  // The message of an error document, whichever shape it has ({"error": "..."} or
  // {"error": {"message": "..."}}), else the HTTP status.
  function errorMessage(response, body) {
    const error = body && body.error;
    if (typeof error === 'string') return error;
    if (error && typeof error.message === 'string') return error.message;
    if (body && typeof body.message === 'string') return body.message;
    return `the server answered ${response.status} ${response.statusText}`.trim();
  }

  // GET path?params as JSON, with the token when there is one. Relative URLs, so the page
  // also works behind a proxy that serves it under a prefix.
  async function getJson(path, params, signal) {
    const url = new URL(path, document.baseURI);
    for (const [name, value] of Object.entries(params || {})) {
      if (value !== '' && value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    const headers = { Accept: 'application/json' };
    const token = storedToken();
    if (token) headers.Authorization = `Bearer ${token}`;
    const response = await fetch(url, { headers, signal, cache: 'no-store', credentials: 'omit' });
    if (response.status === 401) throw new AuthNeeded(token ? 'rejected' : 'missing');
    const text = await response.text();
    let body = null;
    try { body = text ? JSON.parse(text) : null; } catch { body = null; }
    if (!response.ok) throw new Error(errorMessage(response, body));
    if (body === null || typeof body !== 'object') throw new Error('the server did not answer with JSON');
    return body;
  }

  // --- text and highlighting -----------------------------------------------------------

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  // The query's words (what kasava searches for), longest first so that a longer word wins
  // where two overlap; null when there is nothing to mark.
  function termPattern(query) {
    const words = query.match(/[\p{L}\p{N}_]+/gu) || [];
    const terms = new Set();
    for (const word of words) {
      terms.add(word.toLowerCase());
      // parse_config and parseConfig both answer "parse config": mark the parts as well.
      for (const part of word.split(/_+|(?<=\p{Ll})(?=\p{Lu})/u)) {
        if (part.length >= 2) terms.add(part.toLowerCase());
      }
    }
    const list = [...terms].filter((t) => t.length >= 2).sort((a, b) => b.length - a.length);
    if (!list.length) return null;
    const escaped = list.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    return new RegExp(escaped.join('|'), 'giu');
  }

  // Appends text to parent with the pattern's matches in <mark>, as text nodes only.
  function appendHighlighted(parent, text, pattern) {
    if (!pattern || !text) {
      parent.append(text || '');
      return;
    }
    let last = 0;
    pattern.lastIndex = 0;
    for (const match of text.matchAll(pattern)) {
      if (match.index > last) parent.append(text.slice(last, match.index));
      parent.append(element('mark', '', match[0]));
      last = match.index + match[0].length;
    }
    if (last < text.length) parent.append(text.slice(last));
  }

  function splitLines(text) {
    const lines = String(text ?? '').split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    return lines;
  }

  // Numbered lines as a <pre>: first is the number of lines[0]; lines in [markFrom, markTo]
  // are the result's own when the view shows more than the result.
  function codeBlock(lines, first, pattern, markFrom, markTo) {
    const pre = element('pre', 'code');
    lines.forEach((line, i) => {
      const number = first + i;
      const row = element('span', 'line');
      if (markFrom !== undefined && number >= markFrom && number <= markTo) row.classList.add('hit');
      row.append(element('span', 'ln', number));
      const src = element('span', 'src');
      appendHighlighted(src, line, pattern);
      row.append(src);
      pre.append(row);
    });
    return pre;
  }

  // The lines of a snippet worth showing first: from just above the first line that holds
  // a query word, k_snippet_lines of them.
  function snippetWindow(lines, pattern) {
    let first = 0;
    if (pattern) {
      const hit = lines.findIndex((line) => { pattern.lastIndex = 0; return pattern.test(line); });
      if (hit > 1) first = Math.min(hit - 1, Math.max(0, lines.length - k_snippet_lines));
    }
    return { first, count: Math.min(k_snippet_lines, lines.length - first) };
  }

  // --- results -------------------------------------------------------------------------

  function numberOr(value, fallback) {
    return Number.isFinite(value) ? value : fallback;
  }

  // A shared store names each result's repository; a server of one index names it once.
  function resultRepository(result) {
    return typeof result.repository === 'string' ? result.repository : servedRepository;
  }

  // Results grouped by repository, then by file, keeping the server's order of first
  // appearance (its ranking) at both levels.
  function group(results) {
    const repos = new Map();
    for (const result of results) {
      const repoName = resultRepository(result);
      if (!repos.has(repoName)) repos.set(repoName, new Map());
      const files = repos.get(repoName);
      const path = String(result.path ?? '');
      if (!files.has(path)) files.set(path, []);
      files.get(path).push(result);
    }
    return repos;
  }

  function renderResult(result, pattern) {
    const start = numberOr(result.start_line, 1);
    const end = numberOr(result.end_line, start);
    const item = element('div', 'result');
    item.tabIndex = -1;
    item.setAttribute('role', 'option');
    item.setAttribute('aria-selected', 'false');
    item.setAttribute('aria-expanded', 'false');
    item.dataset.path = String(result.path ?? '');
    item.dataset.repository = resultRepository(result);
    item.dataset.start = String(start);
    item.dataset.end = String(end);
    item.dataset.symbol = String(result.symbol ?? '');

    const head = element('div', 'result-head');
    head.append(element('span', 'lines', start === end ? `${start}` : `${start}–${end}`));
    if (result.kind) head.append(element('span', 'kind', result.kind));
    if (result.symbol) {
      const symbol = element('code', 'symbol');
      const name = result.parent ? `${result.parent}.${result.symbol}` : String(result.symbol);
      appendHighlighted(symbol, name, pattern);
      head.append(symbol);
    }
    item.append(head);

    const lines = splitLines(result.snippet);
    const shown = snippetWindow(lines, pattern);
    const snippet = codeBlock(lines.slice(shown.first, shown.first + shown.count),
                              start + shown.first, pattern);
    snippet.classList.add('snippet');
    item.append(snippet);
    if (lines.length > shown.count) {
      const more = lines.length - shown.count;
      item.append(element('div', 'more', `${more} more line${more === 1 ? '' : 's'} — Enter or click to open`));
    }
    item.addEventListener('click', (event) => {
      if (String(window.getSelection() ?? '') !== '') return; // selecting text, not opening
      if (event.target.closest('a')) return;
      select(items.indexOf(item), false);
      toggle(item);
    });
    return item;
  }

  function render(query, body, started) {
    const results = Array.isArray(body.results) ? body.results : [];
    const pattern = termPattern(query);
    resultsEl.replaceChildren();
    items = [];
    selected = -1;
    const repos = group(results);
    for (const [repoName, files] of repos) {
      const section = element('section', 'repository');
      if (repoName || repos.size > 1) section.append(element('h2', 'repo-name', repoName || '(this repository)'));
      for (const [path, fileResults] of files) {
        const file = element('article', 'file');
        const title = element('h3', 'file-name');
        appendHighlighted(title, path, pattern);
        const language = fileResults[0].language;
        if (language) title.append(' ', element('span', 'language', language));
        file.append(title);
        const list = element('div', 'file-results');
        list.setAttribute('role', 'listbox');
        for (const result of fileResults) {
          const item = renderResult(result, pattern);
          items.push(item);
          list.append(item);
        }
        file.append(list);
        section.append(file);
      }
      resultsEl.append(section);
      if (repoName) addOption(repo, repoName);
    }
    for (const language of new Set(results.map((r) => r.language))) {
      if (typeof language === 'string') addOption(lang, language);
    }
    const ms = Math.round(performance.now() - started);
    const count = results.length;
    setStatus(count ? `${count} result${count === 1 ? '' : 's'} · ${ms} ms` : `nothing found for “${query}”`);
    resultsEl.dataset.query = query;
    resultsEl.dataset.count = String(count);
  }

  // --- selection and opening -----------------------------------------------------------

  function select(index, scroll = true) {
    if (!items.length) return;
    if (selected >= 0 && items[selected]) {
      items[selected].classList.remove('selected');
      items[selected].setAttribute('aria-selected', 'false');
    }
    selected = Math.max(0, Math.min(items.length - 1, index));
    const item = items[selected];
    item.classList.add('selected');
    item.setAttribute('aria-selected', 'true');
    if (scroll) item.scrollIntoView({ block: 'nearest' });
  }

  async function toggle(item) {
    const opened = item.querySelector('.opened');
    if (opened) {
      opened.remove();
      item.classList.remove('open');
      item.setAttribute('aria-expanded', 'false');
      return;
    }
    const start = Number(item.dataset.start);
    const end = Number(item.dataset.end);
    const first = Math.max(1, start - k_context_lines);
    const last = Math.min(end + k_context_lines, first + k_max_open_lines - 1);
    const view = element('div', 'opened');
    view.append(element('div', 'loading', 'opening…'));
    item.append(view);
    item.classList.add('open');
    item.setAttribute('aria-expanded', 'true');
    try {
      const body = await getJson('api/file', {
        path: item.dataset.path, start: first, end: last, repo: item.dataset.repository,
      });
      const text = typeof body.text === 'string' ? body.text : String(body.content ?? '');
      const from = numberOr(body.start_line, numberOr(body.first, numberOr(body.start, first)));
      view.replaceChildren(codeBlock(splitLines(text), from, termPattern(box.value), start, end));
      item.dataset.openedFrom = String(from);
    } catch (error) {
      if (error instanceof AuthNeeded) {
        view.remove();
        item.classList.remove('open');
        askForToken(error.message);
        return;
      }
      view.replaceChildren(element('div', 'error', `could not open the lines: ${error.message}`));
    }
  }

  // --- searching -----------------------------------------------------------------------

  function setStatus(text, isError = false) {
    statusLine.textContent = text;
    statusLine.classList.toggle('error', isError);
  }

  function filters() {
    return { lang: lang.value, path: pathFilter.value.trim(), repo: repo.value, mode: mode.value };
  }

  function remember(query) {
    const params = new URLSearchParams();
    if (query) params.set('q', query);
    for (const [name, value] of Object.entries(filters())) if (value) params.set(name, value);
    const search = params.toString();
    history.replaceState(null, '', search ? `?${search}` : location.pathname);
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(search, k_debounce_ms);
  }

  async function search() {
    clearTimeout(timer);
    if (inflight) inflight.abort();
    const query = box.value.trim();
    remember(query);
    const mine = ++generation;
    if (!query) {
      inflight = null;
      resultsEl.replaceChildren();
      items = [];
      selected = -1;
      resultsEl.dataset.query = '';
      resultsEl.dataset.count = '0';
      setStatus('');
      return;
    }
    const controller = new AbortController();
    inflight = controller;
    const started = performance.now();
    resultsEl.setAttribute('aria-busy', 'true');
    try {
      const params = { q: query, ...filters() };
      const body = await getJson('api/search', { ...params, limit: k_limit }, controller.signal);
      if (mine !== generation) return;
      render(query, body, started);
      // Which request these results answer (the browser test waits for it).
      resultsEl.dataset.search = new URLSearchParams(params).toString();
    } catch (error) {
      if (mine !== generation || error.name === 'AbortError') return;
      if (error instanceof AuthNeeded) askForToken(error.message);
      else setStatus(error.message, true);
    } finally {
      if (mine === generation) {
        inflight = null;
        resultsEl.removeAttribute('aria-busy');
      }
    }
  }

  // --- filters from /api/status --------------------------------------------------------

  function addOption(select, value) {
    if (!value || [...select.options].some((o) => o.value === value)) return;
    select.append(new Option(value, value));
  }

  function names(value) {
    if (Array.isArray(value)) {
      return value.map((v) => (typeof v === 'string' ? v : v && (v.name ?? v.repository))).filter((v) => typeof v === 'string');
    }
    if (value && typeof value === 'object') return Object.keys(value);
    return typeof value === 'string' ? [value] : [];
  }

  async function loadStatus() {
    try {
      const body = await getJson('api/status');
      for (const name of names(body.languages).sort()) addOption(lang, name);
      for (const name of names(body.repositories ?? body.repository).sort()) addOption(repo, name);
      if (typeof body.repository === 'string') servedRepository = body.repository;
      statusLoaded = true;
    } catch (error) {
      if (error instanceof AuthNeeded) askForToken(error.message);
      // Otherwise the filters keep what results bring: the status is a convenience.
    }
  }

  // --- the token -----------------------------------------------------------------------

  function askForToken(reason) {
    if (reason === 'rejected') storeToken('');
    tokenError.hidden = reason !== 'rejected';
    tokenError.textContent = reason === 'rejected' ? 'The server did not accept that token.' : '';
    tokenForm.hidden = false;
    document.body.dataset.token = 'needed';
    setStatus(''); // the form says what is needed
    tokenInput.focus();
  }

  tokenForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = tokenInput.value.trim();
    if (!value) return;
    storeToken(value);
    tokenInput.value = '';
    tokenForm.hidden = true;
    document.body.dataset.token = 'given';
    setStatus('');
    if (!statusLoaded) loadStatus();
    box.focus();
    search();
  });

  // --- events --------------------------------------------------------------------------

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    search();
  });
  box.addEventListener('input', schedule);
  pathFilter.addEventListener('input', schedule);
  for (const select of [lang, repo, mode]) select.addEventListener('change', search);

  function editable(target) {
    return target instanceof HTMLElement &&
      (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
  }

  document.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    const target = event.target;
    const inBox = target === box;
    const onResult = target instanceof HTMLElement && target.closest('.result') !== null;
    if (event.key === '/' && !editable(target)) {
      event.preventDefault();
      box.focus();
      box.select();
      return;
    }
    if (event.key === 'Escape' && !inBox) {
      box.focus();
      return;
    }
    if (!(inBox || onResult || !editable(target))) return;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      if (!items.length) return;
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      select(selected < 0 ? (step > 0 ? 0 : items.length - 1) : selected + step);
    } else if (event.key === 'Enter' && selected >= 0 && items[selected] && (inBox || onResult || !editable(target))) {
      // In the box, Enter with no result selected searches at once (the form's submit).
      event.preventDefault();
      toggle(items[selected]);
    }
  });

  // --- start ---------------------------------------------------------------------------

  const initial = new URLSearchParams(location.search);
  box.value = initial.get('q') || '';
  pathFilter.value = initial.get('path') || '';
  for (const [select, name] of [[lang, 'lang'], [repo, 'repo'], [mode, 'mode']]) {
    const value = initial.get(name);
    if (value) {
      addOption(select, value);
      select.value = value;
    }
  }
  // The status first: it names the repository that results of one index are grouped under.
  loadStatus().then(() => { if (box.value && !resultsEl.dataset.search) search(); });
  document.body.dataset.ready = 'true';
})();
