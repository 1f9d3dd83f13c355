#include "base/ca_file.h"

#include <cerrno>
#include <fstream>
#include <sstream>

#include "base/unique_fd.h"

namespace slurmfleet {

Status CheckCaFile(const std::string& path, std::string_view where) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Fail(Code::kInvalidInput,
                "cannot read the CA bundle " + path + ": " + ErrnoText(errno) +
                    "; give a readable PEM file, or leave the setting out to use the system's CAs",
                std::string(where));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    return Fail(Code::kInvalidInput,
                path +
                    " holds no PEM certificate (-----BEGIN CERTIFICATE-----); give the CA "
                    "that signed the server's certificate, in PEM",
                std::string(where));
  }
  return {};
}

}  // namespace slurmfleet
