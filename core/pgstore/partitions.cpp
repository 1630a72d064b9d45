// The partitions of a model's codes in the shared store: reading, assigning, training (see
// partitions.hpp).
#include "core/pgstore/partitions.hpp"

#include <algorithm>

#include "core/pgstore/connection.hpp"
#include "core/pgstore/store.hpp"
#include "core/util/code_partitions.hpp"

namespace kasava::pgstore {

namespace {

// Codes sampled per partition to train on: enough for a majority per bit (as the local
// index's partitions are trained).
constexpr std::size_t k_training_codes_per_partition = 32;
// Codes read (and updated) per statement while training: ~2.5 MB of text a page.
constexpr int k_training_page = 20'000;

// Every code of the model that is `bits` long, in key order, a page at a time: `f` gets the
// page's blob ids (hex), ordinals and codes (raw bytes). The page starts after the last key
// in the primary key's own column order, so that each page is a range of its index (a
// length in the WHERE clause made the planner sort every code left on each page: the
// length is checked here).
template <typename F>
void each_code_page(Connection& connection, const std::string& model, std::size_t bits, F&& f) {
  std::string after_blob, after_ordinal = "-1";
  for (;;) {
    const Rows rows = connection.exec(
        "SELECT encode(blob_id, 'hex'), ordinal, encode(substring(varbit_send(code) from 5), 'hex') "
        "FROM chunk_codes WHERE model_id = $1 "
        "AND (blob_id, model_id, ordinal) > (decode($2, 'hex'), $1::smallint, $3::integer) "
        "ORDER BY blob_id, model_id, ordinal LIMIT $4",
        {Param::text(model), Param::text(after_blob), Param::text(after_ordinal),
         Param::text(std::to_string(k_training_page))});
    if (rows.size() == 0) return;
    std::vector<std::string> blobs, ordinals, codes;
    for (const auto& row : rows.rows) {
      auto code = from_hex(row.at(2));
      if (!code || code->size() * 8 != bits) continue;
      blobs.push_back(row.at(0));
      ordinals.push_back(row.at(1));
      codes.push_back(std::move(*code));
    }
    f(blobs, ordinals, codes);
    after_blob = rows.rows.back().at(0);
    after_ordinal = rows.rows.back().at(1);
  }
}

} // namespace

std::optional<CodePartitions> read_partitions(Connection& connection, std::int16_t model) {
  const Rows rows = connection.exec(
      "SELECT generation, code_bytes, encode(centroids, 'hex'), array_to_string(sizes, ','), trained_codes "
      "FROM code_partitions WHERE model_id = $1",
      {Param::text(std::to_string(model))});
  if (rows.size() == 0) return std::nullopt;
  CodePartitions partitions;
  partitions.generation = to_int(rows.at(0, 0));
  const std::int64_t bytes = to_int(rows.at(0, 1));
  auto centroids = from_hex(rows.at(0, 2));
  partitions.trained_codes = to_int(rows.at(0, 4));
  const std::string& sizes = rows.at(0, 3);
  for (std::size_t at = 0; at < sizes.size();) {
    const std::size_t comma = std::min(sizes.find(',', at), sizes.size());
    partitions.sizes.push_back(to_int(sizes.substr(at, comma - at)));
    at = comma + 1;
  }
  if (bytes <= 0 || bytes > 4096 || !centroids || partitions.sizes.empty() ||
      centroids->size() != static_cast<std::size_t>(bytes) * partitions.sizes.size()) {
    return std::nullopt;
  }
  partitions.code_bytes = static_cast<std::size_t>(bytes);
  partitions.centroids.assign(centroids->begin(), centroids->end());
  return partitions;
}

std::vector<std::int32_t> partitions_of(const std::optional<CodePartitions>& partitions,
                                        const std::vector<const std::string*>& codes) {
  std::vector<std::int32_t> result(codes.size(), -1);
  if (!partitions) return result;
  const std::size_t bytes = partitions->code_bytes;
  std::vector<std::uint8_t> together;
  std::vector<std::size_t> which;
  for (std::size_t i = 0; i < codes.size(); ++i) {
    if (codes[i]->size() != bytes) continue;
    together.insert(together.end(), codes[i]->begin(), codes[i]->end());
    which.push_back(i);
  }
  const auto nearest = util::assign_partitions(together.data(), which.size(), partitions->centroids, bytes);
  for (std::size_t j = 0; j < which.size(); ++j) result[which[j]] = static_cast<std::int32_t>(nearest[j]);
  return result;
}

std::vector<std::int32_t> partitions_to_read(const CodePartitions& partitions, const std::string& code,
                                             double share) {
  std::vector<std::int32_t> chosen = {-1};
  if (code.size() != partitions.code_bytes) return chosen;
  const auto wanted = static_cast<std::int64_t>(share * static_cast<double>(partitions.trained_codes));
  std::int64_t seen = 0;
  for (const std::uint32_t p : util::partitions_by_distance(
           partitions.centroids, reinterpret_cast<const std::uint8_t*>(code.data()), partitions.code_bytes)) {
    if (seen >= wanted) break;
    chosen.push_back(static_cast<std::int32_t>(p));
    seen += partitions.sizes[p];
  }
  return chosen;
}

std::int64_t train_partitions(Connection& connection, std::int16_t model_number, std::int64_t min_codes) {
  const std::string model = std::to_string(model_number);
  Transaction transaction(connection);
  if (connection.exec("SELECT pg_try_advisory_xact_lock($1)", {Param::text(std::to_string(k_collect_lock))})
          .at(0, 0) != "t") {
    return 0;
  }
  const Rows counted = connection.exec(
      "SELECT (SELECT count(*) FROM chunk_codes WHERE model_id = $1), "
      "(SELECT trained_codes FROM code_partitions WHERE model_id = $1), "
      "(SELECT length(code) FROM chunk_codes WHERE model_id = $1 GROUP BY 1 ORDER BY count(*) DESC LIMIT 1)",
      {Param::text(model)});
  const std::int64_t total = to_int(counted.at(0, 0));
  const std::int64_t trained = to_int(counted.at(0, 1));
  const std::int64_t bits = to_int(counted.at(0, 2));
  if (total < min_codes || (trained > 0 && total < 2 * trained) || bits <= 0 || bits % 8 != 0) {
    return 0;
  }
  const auto bytes = static_cast<std::size_t>(bits / 8);
  const int k = util::partition_count(static_cast<std::size_t>(total));

  // A sample spread evenly over the codes in key order (deterministic, as the local index's).
  const std::size_t wanted = static_cast<std::size_t>(k) * k_training_codes_per_partition;
  const std::size_t step = std::max<std::size_t>(1, static_cast<std::size_t>(total) / wanted);
  std::vector<std::uint8_t> sample;
  std::size_t position = 0;
  each_code_page(connection, model, bytes * 8,
                 [&](const auto&, const auto&, const std::vector<std::string>& codes) {
                   for (const std::string& code : codes) {
                     if (position++ % step == 0 && sample.size() < wanted * bytes) {
                       sample.insert(sample.end(), code.begin(), code.end());
                     }
                   }
                 });
  CodePartitions partitions;
  partitions.code_bytes = bytes;
  partitions.centroids = util::train_centroids(sample.data(), sample.size() / bytes, bytes, k);
  partitions.sizes.assign(static_cast<std::size_t>(k), 0);

  std::int64_t assigned = 0;
  std::optional<CodePartitions> known(partitions);
  each_code_page(connection, model, bytes * 8,
                 [&](const std::vector<std::string>& blobs, const std::vector<std::string>& ordinals,
                     const std::vector<std::string>& codes) {
                   std::vector<const std::string*> views;
                   for (const std::string& code : codes) views.push_back(&code);
                   const std::vector<std::int32_t> nearest = partitions_of(known, views);
                   std::vector<std::string> numbers;
                   for (const std::int32_t p : nearest) {
                     numbers.push_back(std::to_string(p));
                     if (p >= 0) ++partitions.sizes[static_cast<std::size_t>(p)];
                   }
                   assigned += static_cast<std::int64_t>(codes.size());
                   connection.exec(
                       "UPDATE chunk_codes c SET partition = u.p "
                       "FROM unnest($2::text[], $3::integer[], $4::integer[]) AS u(b, o, p) "
                       "WHERE c.blob_id = decode(u.b, 'hex') AND c.model_id = $1 AND c.ordinal = u.o "
                       "AND c.partition <> u.p",
                       {Param::text(model), Param::text(text_array(blobs)), Param::text(text_array(ordinals)),
                        Param::text(text_array(numbers))});
                 });
  std::string sizes = "{";
  for (const std::int64_t size : partitions.sizes) {
    if (sizes.size() > 1) sizes += ',';
    sizes += std::to_string(size);
  }
  sizes += '}';
  connection.exec(
      "INSERT INTO code_partitions(model_id, generation, code_bytes, centroids, sizes, trained_codes) "
      "VALUES ($1, 1, $2, decode($3, 'hex'), $4::integer[], $5) ON CONFLICT (model_id) DO UPDATE SET "
      "generation = code_partitions.generation + 1, code_bytes = excluded.code_bytes, "
      "centroids = excluded.centroids, sizes = excluded.sizes, trained_codes = excluded.trained_codes",
      {Param::text(model), Param::text(std::to_string(bytes)),
       Param::text(to_hex(std::string_view(reinterpret_cast<const char*>(partitions.centroids.data()),
                                           partitions.centroids.size()))),
       Param::text(sizes), Param::text(std::to_string(assigned))});
  transaction.commit();
  return assigned;
}

} // namespace kasava::pgstore
