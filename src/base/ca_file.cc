#include "base/ca_file.h"

#include "base/read_file.h"

namespace slurmfleet {

Status CheckCaFile(const std::string& path, std::string_view where) {
  // far more than any CA bundle (Debian's holds about 200 KB)
  Result<std::string> text = ReadBoundedFile(path, 16 * 1024 * 1024);
  if (!text) {
    return Fail(Code::kInvalidInput,
                "the CA bundle: " + text.error().message +
                    "; give a readable PEM file, or leave the setting out to use the system's CAs",
                std::string(where));
  }
  if (text->find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    return Fail(Code::kInvalidInput,
                path +
                    " holds no PEM certificate (-----BEGIN CERTIFICATE-----); give the CA "
                    "that signed the server's certificate, in PEM",
                std::string(where));
  }
  return {};
}

}  // namespace slurmfleet
