// CheckCaFile: a PEM bundle given to verify a server's TLS certificate (slurmrestd's, Jenkins')
// is checked when the client is made, so a wrong path is reported once, at start-up, naming the
// setting, instead of as "cannot reach" on every request.
#pragma once

#include <string>
#include <string_view>

#include "base/error.h"

namespace slurmfleet {

// kInvalidInput, at `where` (e.g. "clouds.hpc.caFile"), when `path` cannot be read or holds no
// PEM certificate.
Status CheckCaFile(const std::string& path, std::string_view where);

}  // namespace slurmfleet
