#include "slurm/response_errors.h"

#include "base/utf8.h"

namespace slurmfleet::slurm {
namespace {

std::vector<SlurmMessage> MessagesOf(const nlohmann::json& body, const char* key) {
  std::vector<SlurmMessage> out;
  if (!body.is_object()) return out;
  auto it = body.find(key);
  if (it == body.end() || !it->is_array()) return out;
  for (const nlohmann::json& e : *it) {
    if (!e.is_object()) continue;
    SlurmMessage m;
    if (auto n = e.find("error_number"); n != e.end() && n->is_number_integer())
      m.error_number = n->get<int>();
    if (auto s = e.find("error"); s != e.end() && s->is_string()) m.error = s->get<std::string>();
    if (auto s = e.find("description"); s != e.end() && s->is_string())
      m.description = s->get<std::string>();
    if (auto s = e.find("source"); s != e.end() && s->is_string()) m.source = s->get<std::string>();
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

std::vector<SlurmMessage> ErrorsOf(const nlohmann::json& body) {
  return MessagesOf(body, "errors");
}
std::vector<SlurmMessage> WarningsOf(const nlohmann::json& body) {
  return MessagesOf(body, "warnings");
}

std::string Describe(const SlurmMessage& m) {
  std::string out;
  if (m.error_number != 0) out = "[" + std::to_string(m.error_number) + "] ";
  // Slurm often puts the specific text in description and a generic one in error.
  if (!m.description.empty()) {
    out += m.description;
    if (!m.error.empty() && m.error != m.description && m.error != "No error")
      out += " (" + m.error + ")";
  } else {
    out += m.error;
  }
  if (!m.source.empty() && m.source.front() == '#') out += " at " + m.source;
  return out;
}

std::string DescribeAll(const std::vector<SlurmMessage>& ms) {
  std::string out;
  for (const SlurmMessage& m : ms) {
    if (!out.empty()) out += "; ";
    out += Describe(m);
  }
  return out;
}

Error ErrorForStatus(long status, const std::string& body, bool idempotent,
                     const std::string& where, const std::string& fix_when_rejected) {
  nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  std::vector<SlurmMessage> errors = ErrorsOf(parsed);
  std::string slurm_says = DescribeAll(errors);
  if (slurm_says.empty() && !parsed.is_object()) {
    // slurmrestd answers some errors in text/plain ("Authentication failure")
    slurm_says = RepairUtf8(body.substr(0, 200));
    while (!slurm_says.empty() && (slurm_says.back() == '\n' || slurm_says.back() == ' '))
      slurm_says.pop_back();
  }
  auto with = [&](std::string text) {
    return slurm_says.empty() ? text : text + ": " + slurm_says;
  };
  bool auth_error = status == 511 || status == 401;
  for (const SlurmMessage& m : errors) auth_error = auth_error || m.error_number == kSlurmAuthError;
  if (auth_error) {
    return {Code::kAuth,
            with(status == 401
                     ? "slurmrestd requires a token (HTTP 401)"
                     : "slurmrestd rejected the token (HTTP " + std::to_string(status) +
                           "): it is bad, expired, or for another user; " + fix_when_rejected),
            where};
  }
  if (status == 404) {
    bool invalid_id = false;
    for (const SlurmMessage& m : errors)
      invalid_id = invalid_id || m.error_number == kSlurmInvalidJobId;
    return {
        Code::kNotFound,
        invalid_id ? with("no such job") : with("slurmrestd does not serve this path (HTTP 404)"),
        where};
  }
  if (status == 403) return {Code::kRejected, with("permission denied (HTTP 403)"), where};
  // For a POST, slurmctld's own verdict (an ESLURM_* error, 2000-2999) means it read the request
  // and refused it: nothing was created, whatever the HTTP status. Slurm 24.11 answers a job for an
  // unknown partition with HTTP 500 and error 2000; taken as an unknown outcome, it was looked for
  // and sent again forever. Idempotent calls keep retrying a 5xx as before.
  bool refused = !errors.empty();
  for (const SlurmMessage& m : errors) {
    refused =
        refused && m.error_number >= kSlurmctldErrorsBegin && m.error_number < kSlurmctldErrorsEnd;
  }
  if (status >= 500 && (idempotent || !refused)) {
    std::string text = "slurmrestd answered HTTP " + std::to_string(status);
    return {idempotent ? Code::kUnavailable : Code::kUnknownOutcome, with(text), where};
  }
  return {Code::kRejected, with("Slurm rejected the request (HTTP " + std::to_string(status) + ")"),
          where};
}

}  // namespace slurmfleet::slurm
