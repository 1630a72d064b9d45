// Drives kasava's search page in headless chromium (puppeteer-core) the way a person would —
// types a query, filters, moves with the keyboard, opens a result, gives a token when asked —
// and prints what it saw as one JSON document. It asserts nothing itself:
// tests/e2e/page_test.cpp runs it and checks the report. Screenshots go to --screenshots.
//
//   node page_test.mjs --url http://127.0.0.1:PORT/ --chromium /usr/bin/chromium (or --firefox PATH)
//        --screenshots DIR --query "parse config" --lang python --path 'web/**'
//        [--token T [--wrong-token W]]
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import puppeteer from 'puppeteer-core';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    chromium: { type: 'string' },
    firefox: { type: 'string', default: '' }, // instead of chromium: Firefox over WebDriver BiDi
    screenshots: { type: 'string' },
    query: { type: 'string' },
    lang: { type: 'string', default: '' },
    path: { type: 'string', default: '' },
    token: { type: 'string', default: '' },
    'wrong-token': { type: 'string', default: '' },
  },
});
for (const name of ['url', 'screenshots', 'query']) {
  if (!args[name]) {
    console.error(`page_test: error: --${name} is required`);
    process.exit(2);
  }
}
if (!args.chromium === !args.firefox) {
  console.error('page_test: error: give one browser, --chromium PATH or --firefox PATH');
  process.exit(2);
}

const k_wait = { timeout: 20000 };
const report = {
  console_errors: [],
  page_errors: [],
  failed_requests: [],
  search_requests: 0,
  screenshots: [],
};

// What the page shows for its results, read from the DOM.
async function readResults(page) {
  return page.$$eval('#results .result', (items) => items.map((item) => ({
    repository: item.dataset.repository,
    path: item.dataset.path,
    symbol: item.dataset.symbol,
    start: Number(item.dataset.start),
    end: Number(item.dataset.end),
    language: item.closest('.file')?.querySelector('.language')?.textContent ?? '',
    marks: [...item.querySelectorAll('mark')].map((m) => m.textContent),
    text: item.querySelector('.snippet')?.textContent ?? '',
    selected: item.classList.contains('selected'),
  })));
}

// Waits until the results on the page answer exactly these parameters.
async function waitForSearch(page, params) {
  const expected = new URLSearchParams(params).toString();
  await page.waitForFunction(
    (want) => document.getElementById('results').dataset.search === want, k_wait, expected);
}

function filters(overrides) {
  return { q: args.query, lang: '', path: '', repo: '', mode: '', ...overrides };
}

async function screenshot(page, name) {
  const file = join(args.screenshots, name);
  await page.screenshot({ path: file, fullPage: true });
  report.screenshots.push(file);
}

async function main() {
  mkdirSync(args.screenshots, { recursive: true });
  const sandbox = process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [];
  const browser = args.firefox ? await puppeteer.launch({
    browser: 'firefox', executablePath: args.firefox, headless: true, timeout: 30000,
  }) : await puppeteer.launch({
    executablePath: args.chromium,
    headless: true, // chromium's new headless mode (--headless=new)
    args: [...sandbox, '--headless=new', '--disable-gpu', '--disable-dev-shm-usage',
           '--no-first-run', '--no-default-browser-check', '--disable-extensions'],
    timeout: 30000,
  });
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(20000);
    page.on('console', (message) => {
      if (message.type() === 'error') report.console_errors.push(message.text());
    });
    page.on('pageerror', (error) => report.page_errors.push(String(error)));
    page.on('requestfailed', (request) => {
      // A search aborted because a newer one started is the page working as meant.
      const reason = request.failure()?.errorText ?? '';
      if (!reason.includes('ERR_ABORTED')) report.failed_requests.push(`${request.url()} ${reason}`);
    });
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.endsWith('/api/search')) report.search_requests += 1;
    });
    await page.setViewport({ width: 1100, height: 800 });
    // Firefox over BiDi cannot emulate media features: it shows its own (light) theme.
    if (!args.firefox) await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);

    const response = await page.goto(args.url, { waitUntil: 'load' });
    report.page_status = response.status();
    report.page_headers = response.headers();
    await page.waitForSelector('body[data-ready="true"]', k_wait);
    report.title = await page.title();

    if (args.token) {
      // The server needs a token: the page must ask for one before anything else works.
      await page.waitForSelector('#token-form:not([hidden])', k_wait);
      report.token_prompt_shown = true;
      report.token_input_focused = await page.evaluate(() => document.activeElement?.id === 'token');
      await screenshot(page, 'search-page-token.png');
      if (args['wrong-token']) {
        // A token the server refuses: the page says so and asks again, keeping none.
        await page.type('#token', args['wrong-token']);
        await page.keyboard.press('Enter');
        await page.waitForSelector('#token-error:not([hidden])', k_wait);
        report.wrong_token_message = await page.$eval('#token-error', (node) => node.textContent);
        report.wrong_token_kept = await page.evaluate(() => sessionStorage.getItem('kasava.token') !== null);
        report.token_prompt_again = await page.$eval('#token-form', (form) => !form.hidden);
      }
      await page.type('#token', args.token);
      await page.keyboard.press('Enter');
      await page.waitForSelector('#token-form[hidden]', k_wait);
      report.token_stored = await page.evaluate(() => sessionStorage.getItem('kasava.token') !== null);
    }

    // '/' focuses the search box from anywhere else on the page.
    await page.evaluate(() => document.activeElement?.blur());
    report.focused_before_slash = await page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName);
    await page.keyboard.press('/');
    report.slash_focuses = await page.evaluate(() => document.activeElement?.id === 'q');

    // Searching as you type: one key at a time, no Enter.
    const requestsBefore = report.search_requests;
    await page.keyboard.type(args.query, { delay: 40 });
    await waitForSearch(page, filters());
    report.typing_requests = report.search_requests - requestsBefore;
    report.results = await readResults(page);
    report.status_text = await page.$eval('#status', (node) => node.textContent);
    report.language_options = await page.$$eval('#lang option', (options) => options.map((o) => o.value));
    report.repository_options = await page.$$eval('#repo option', (options) => options.map((o) => o.value));
    // Untrusted text from the server must stay text: no element made from it.
    report.injected_elements = await page.$$eval('#results img, #results script, #results iframe', (n) => n.length);
    report.injected_script_ran = await page.evaluate(() => window.kasavaInjected === true);

    if (args.lang) {
      await page.select('#lang', args.lang);
      await waitForSearch(page, filters({ lang: args.lang }));
      report.lang_filtered = await readResults(page);
      await page.select('#lang', '');
      await waitForSearch(page, filters());
    }
    if (args.path) {
      await page.type('#path', args.path);
      await waitForSearch(page, filters({ path: args.path }));
      report.path_filtered = await readResults(page);
      await page.$eval('#path', (input) => { input.value = ''; input.dispatchEvent(new Event('input')); });
      await waitForSearch(page, filters());
    }

    // The keyboard: Escape goes back to the box from the path field (where '/' is typed; in
    // the box, Escape clears it), down twice, up once, Enter opens the lines.
    if (await page.evaluate(() => document.activeElement?.id !== 'q')) await page.keyboard.press('Escape');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowUp');
    report.selected_after_keys = (await readResults(page)).findIndex((r) => r.selected);
    report.focus_after_keys = await page.evaluate(() => document.activeElement?.id);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#results .result.selected .opened .code', k_wait);
    report.opened = await page.$eval('#results .result.selected', (item) => {
      const lines = [...item.querySelectorAll('.opened .line')];
      return {
        path: item.dataset.path,
        symbol: item.dataset.symbol,
        first_line: Number(lines[0]?.querySelector('.ln')?.textContent),
        last_line: Number(lines[lines.length - 1]?.querySelector('.ln')?.textContent),
        hit_lines: lines.filter((l) => l.classList.contains('hit')).length,
        text: lines.map((l) => l.querySelector('.src')?.textContent ?? '').join('\n'),
      };
    });
    report.url_after_search = page.url();

    await screenshot(page, 'search-page-light.png');
    if (args.firefox) return;
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
    report.dark_background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await screenshot(page, 'search-page-dark.png');
    await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    report.phone_overflows = await page.evaluate(
      () => document.documentElement.scrollWidth > document.documentElement.clientWidth);
    await screenshot(page, 'search-page-phone-dark.png');
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    report.light_background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  } finally {
    await browser.close();
  }
}

try {
  await main();
  process.stdout.write(`${JSON.stringify(report)}\n`);
} catch (error) {
  // What was seen up to the failure helps more than the stack alone.
  console.error(`page_test: error: ${error.stack || error}`);
  console.error(`page_test: seen so far: ${JSON.stringify(report)}`);
  process.exit(1);
}
