#include "store/store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <limits>
#include <mutex>
#include <string_view>
#include <thread>

#include "base/unique_fd.h"
#include "store/checkpointer.h"
#include "store/migrations.h"
#include "store/sqlite.h"

namespace slurmfleet::store {
namespace {

constexpr std::string_view kMemory = ":memory:";

// Short: the lock file keeps other slurmfleets away, and in WAL readers never block the writer,
// so only a foreign writer (an operator's sqlite3 shell) or a checkpoint can make us wait.
constexpr int kBusyTimeoutMs = 1000;

// SQLite checkpoints after the commit that takes the WAL past 1000 frames, on the committing
// connection: with the Store's lock held, and with a sync of the WAL and of the database file
// whatever the commit asked for. The Store's WAL hook replaces that: the commit asks the
// Checkpointer, which runs it on its own thread and connection. After a synced write at SQLite's
// threshold; after writes without a sync only once the WAL is this much larger (64 MiB with
// 4 KiB pages): a burst of them (a pass recording 10,000 changes) rewrites the same pages, and
// each checkpoint would copy and sync them again.
constexpr int kCheckpointFrames = 1000;
constexpr int kUnsyncedCheckpointFrames = 16 * kCheckpointFrames;

std::string Quoted(std::string_view key) { return "'" + std::string(key) + "'"; }

// The single-instance lock: flock(LOCK_EX | LOCK_NB) on `<path>.lock`, which then holds our pid
// for the message the next instance prints. Why this mechanism:
//  - It dies with the process. The kernel drops a flock when the last descriptor of its open file
//    description closes, which kill -9, a crash or an OOM kill all do; there is never a stale lock
//    to clean up by hand (unlike "does the pid file exist").
//  - It conflicts within one process too: a flock belongs to the open file description, so a
//    second Open here gets its own description and fails. POSIX fcntl locks belong to the
//    process, never conflict with themselves, and are dropped when the process closes ANY
//    descriptor of the file, which makes them fragile.
//  - Not SQLite's locking_mode=EXCLUSIVE: it takes the lock only on first access, reports a
//    holder as SQLITE_BUSY (indistinguishable from a transient busy, and with no pid to name),
//    and in WAL mode it also shuts out read-only inspection with the sqlite3 shell and online
//    backups, which the sibling lock file leaves possible.
// The lock file is never deleted: unlinking it would let a new instance lock a fresh inode while
// the old one still holds the unlinked one. O_CLOEXEC keeps exec'd children from inheriting it
// (a forked child that does not exec shares the lock until it exits).
class LockFile {
 public:
  LockFile() = default;
  LockFile(LockFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  LockFile& operator=(LockFile&& other) noexcept {
    Release();
    fd_ = std::exchange(other.fd_, -1);
    return *this;
  }
  ~LockFile() { Release(); }

  static Result<LockFile> Acquire(const std::string& path) {
    const std::string lock_path = path + ".lock";
    LockFile lock;
    lock.fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock.fd_ < 0) {
      return Fail(Code::kInternal, "cannot open lock file " + lock_path + ": " + ErrnoText(errno),
                  path);
    }
    int rc;
    do {
      rc = ::flock(lock.fd_, LOCK_EX | LOCK_NB);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      int error = errno;
      if (error == EWOULDBLOCK) {
        std::string holder;
        if (auto pid = lock.ReadPid()) holder = " (pid " + std::to_string(*pid) + ")";
        return Fail(Code::kConflict,
                    "state file " + path + " is in use by another slurmfleet" + holder +
                        "; stop it or use another state file",
                    path);
      }
      return Fail(Code::kInternal, "cannot lock " + lock_path + ": " + ErrnoText(error), path);
    }
    // The pid only improves the next instance's message, so failing to write it is not an error.
    std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(lock.fd_, 0) == 0) {
      [[maybe_unused]] ssize_t written = ::pwrite(lock.fd_, pid.data(), pid.size(), 0);
    }
    return lock;
  }

 private:
  std::optional<long> ReadPid() const {
    char buffer[32];
    ssize_t n = ::pread(fd_, buffer, sizeof(buffer), 0);
    if (n <= 0) return std::nullopt;  // the holder may not have written it yet
    long pid = 0;
    auto [end, ec] = std::from_chars(buffer, buffer + n, pid);
    if (ec != std::errc() || end == buffer || pid <= 0) return std::nullopt;
    return pid;
  }

  void Release() {
    if (fd_ >= 0) ::close(fd_);  // drops the flock
    fd_ = -1;
  }

  int fd_ = -1;
};

// Creates the state file with mode 0600 before SQLite sees it: it may hold job requests with
// secrets, and SQLite would create it 0644 (less the umask). SQLite gives the -wal and -shm files
// the database file's mode. An existing file that others may read (one made by a tool, a copy
// restored from a backup) is made private, with its -wal and -shm files.
Status CreateStateFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (fd.get() < 0) {
    return Fail(Code::kInternal, "cannot create state file: " + ErrnoText(errno), path);
  }
  for (const std::string& file : {path, path + "-wal", path + "-shm"}) {
    struct stat st {};
    const bool main = file == path;
    if ((main ? ::fstat(fd.get(), &st) : ::stat(file.c_str(), &st)) != 0) {
      if (!main && errno == ENOENT) continue;
      return Fail(Code::kInternal, "cannot read the file's mode: " + ErrnoText(errno), file);
    }
    if ((st.st_mode & 077) == 0) continue;
    const mode_t private_mode = st.st_mode & 0700;
    if ((main ? ::fchmod(fd.get(), private_mode) : ::chmod(file.c_str(), private_mode)) != 0) {
      return Fail(Code::kInvalidInput,
                  "others than its owner may read it, and it holds job requests with agent "
                  "secrets; slurmfleet cannot make it private (" +
                      ErrnoText(errno) + "): chmod 600 " + file,
                  file);
    }
  }
  return {};
}

// Column names qualified: `key` is in both tables. Without the request, the join is left out.
std::string SelectSubmissions(bool with_request) {
  return std::string("SELECT s.key, s.kind, s.cloud, s.owner, ") +
         (with_request ? "r.request_json" : "''") +
         ", s.phase, s.attempts, s.job_id, s.sluid, s.slurm_state, s.state_reason, s.failure, "
         "s.cancel_requested, s.created_at, s.updated_at, s.submit_sent_at, s.last_seen_at, "
         "s.version FROM submissions s" +
         (with_request ? " JOIN requests r ON r.key = s.key" : "");
}

// ?5 (the request) is bound for BindSubmission's sake but goes into `requests` (kInsertRequest).
constexpr std::string_view kInsertSubmission =
    "INSERT INTO submissions (key, kind, cloud, owner, phase, attempts, job_id, sluid, "
    "slurm_state, state_reason, failure, cancel_requested, created_at, updated_at, "
    "submit_sent_at, last_seen_at, version) "
    "VALUES (?1, ?2, ?3, ?4, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)";

constexpr std::string_view kInsertRequest =
    "INSERT INTO requests (key, request_json) VALUES (?1, ?2)";

// Same parameter numbers as kInsertSubmission, so BindSubmission serves both: ?5 (the request)
// and ?14 (created_at) are fixed at Add, bound but unused; ?18 is the version the caller read.
constexpr std::string_view kUpdateSubmission =
    "UPDATE submissions SET kind = ?2, cloud = ?3, owner = ?4, phase = ?6, "
    "attempts = ?7, job_id = ?8, sluid = ?9, slurm_state = ?10, state_reason = ?11, "
    "failure = ?12, cancel_requested = ?13, updated_at = ?15, submit_sent_at = ?16, "
    "last_seen_at = ?17, version = ?18 + 1 WHERE key = ?1 AND version = ?18";

// A key's stream is made at its first event (migration step 5 says why events are found by it).
constexpr std::string_view kAddStream =
    "INSERT INTO streams (key) VALUES (?1) ON CONFLICT (key) DO NOTHING";
constexpr std::string_view kInsertEvent =
    "INSERT INTO events (key, stream, at, type, message) "
    "VALUES (?1, (SELECT id FROM streams WHERE key = ?1), ?2, ?3, ?4)";

// The query reads s's text in place (BindRef): it must be gone before s changes or dies.
void BindSubmission(sqlite::Query& query, const Submission& s, int64_t created_at,
                    int64_t updated_at, int64_t version) {
  query.BindRef(1, s.key)
      .BindRef(2, s.kind)
      .BindRef(3, s.cloud)
      .BindRef(4, s.owner)
      .BindRef(5, s.request_json)
      .BindRef(6, PhaseName(s.phase))
      .Bind(7, int64_t{s.attempts});
  if (s.job_id) {
    query.Bind(8, int64_t{*s.job_id});
  } else {
    query.BindNull(8);
  }
  query.BindRef(9, s.sluid)
      .BindRef(10, s.slurm_state)
      .BindRef(11, s.state_reason)
      .BindRef(12, s.failure)
      .Bind(13, int64_t{s.cancel_requested ? 1 : 0})
      .Bind(14, created_at)
      .Bind(15, updated_at)
      .Bind(16, s.submit_sent_at)
      .Bind(17, s.last_seen_at)
      .Bind(18, version);
}

// Reads a row selected with SelectSubmissions.
Result<Submission> ReadSubmission(const sqlite::Query& row, const std::string& path) {
  Submission s;
  s.key = row.Text(0);
  s.kind = row.Text(1);
  s.cloud = row.Text(2);
  s.owner = row.Text(3);
  s.request_json = row.Text(4);
  std::string phase = row.Text(5);
  auto parsed = PhaseFromName(phase);
  if (!parsed) {
    return Fail(Code::kInternal,
                "submission " + Quoted(s.key) + " has unknown phase " + Quoted(phase) +
                    "; was the file written by a newer slurmfleet?",
                path);
  }
  s.phase = *parsed;
  s.attempts = static_cast<int>(row.Int(6));
  if (!row.IsNull(7)) {
    int64_t job_id = row.Int(7);
    if (job_id < 0 || job_id > std::numeric_limits<uint32_t>::max()) {
      return Fail(Code::kInternal,
                  "submission " + Quoted(s.key) + " has job id " + std::to_string(job_id) +
                      ", outside 0..4294967295",
                  path);
    }
    s.job_id = static_cast<uint32_t>(job_id);
  }
  s.sluid = row.Text(8);
  s.slurm_state = row.Text(9);
  s.state_reason = row.Text(10);
  s.failure = row.Text(11);
  s.cancel_requested = row.Int(12) != 0;
  s.created_at = row.Int(13);
  s.updated_at = row.Int(14);
  s.submit_sent_at = row.Int(15);
  s.last_seen_at = row.Int(16);
  s.version = row.Int(17);
  return s;
}

int64_t ClampLimit(size_t limit) {
  constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  return static_cast<int64_t>(std::min<uint64_t>(limit, kMax));
}

// "'succeeded', 'failed', ..." from IsTerminal, so the SQL cannot drift from the enum.
std::string TerminalPhaseList() {
  std::string list;
  for (int i = 0; i <= static_cast<int>(Phase::kLost); ++i) {
    auto phase = static_cast<Phase>(i);
    if (!IsTerminal(phase)) continue;
    if (!list.empty()) list += ", ";
    list += "'" + std::string(PhaseName(phase)) + "'";
  }
  return list;
}

Record ReadRecord(sqlite::Query& q) {
  return Record{.kind = q.Text(0),
                .name = q.Text(1),
                .cloud = q.Text(2),
                .active = q.Int(3) != 0,
                .doc = q.Text(4),
                .version = q.Int(5),
                .created_at = q.Int(6),
                .updated_at = q.Int(7)};
}

}  // namespace

struct Store::Impl {
  Impl(std::string path, const Clock& clock, LockFile lock,
       std::unique_ptr<sqlite::Connection> conn)
      : path(std::move(path)), clock(clock), lock(std::move(lock)), conn(std::move(conn)) {}

  ~Impl() {
    // Close (and checkpoint) the database before releasing the lock, so the next instance never
    // opens a file we are still writing. The checkpointer's connection first: the last one to
    // close checkpoints the whole WAL and removes it, and that is ours.
    checkpointer.reset();
    conn.reset();
  }

  // Both run inside a transaction the caller holds (or in autocommit for AppendEvent).
  Result<int64_t> InsertEvent(const std::string& key, int64_t at, std::string_view type,
                              std::string_view message);
  Status UpdateRow(const Submission& s, const std::optional<Event>& event, int64_t now);
  // Runs `transaction` (which begins and commits, or rolls back, its own) under the lock, then,
  // when `sync` asks for it, syncs the WAL to disk without the lock. Every write goes through
  // here. The connection commits without a sync (synchronous = NORMAL: the WAL is written, not
  // synced), so a disk sync of 1.5-31 ms no longer holds every other thread's reads and writes;
  // the sync after it makes this commit durable, with whatever else the WAL holds by then.
  template <typename Transaction>
  Status Write(Sync sync, Transaction transaction) {
    {
      std::lock_guard guard(mu);
      unsynced = sync != Sync::kDisk;
      Status written = transaction();
      if (!written || sync != Sync::kDisk || !wal) return written;
    }
    return SyncWal();
  }
  Status SyncWal() const;
  // SQLite's WAL hook, called after every commit with the frames now in the WAL.
  static int Committed(void* impl, sqlite3* db, const char* schema, int frames);
  Status AddRow(const Submission& s, int64_t now);
  Status PutRecordRow(Record& record, const std::optional<Event>& event, int64_t now);

  const std::string path;
  const Clock& clock;
  LockFile lock;  // declared before conn: destroyed after it
  mutable std::mutex mu;
  std::unique_ptr<sqlite::Connection> conn;    // guarded by mu
  bool unsynced = false;                       // guarded by mu: the write committing asked no sync
  std::unique_ptr<Checkpointer> checkpointer;  // none for ":memory:", which has no WAL
  std::optional<UniqueFd> wal;                 // the WAL file, for SyncWal; none for ":memory:"
};

Status Store::Impl::SyncWal() const {
  // A commit in WAL mode appends to this one file: its data, as of this call, is what becomes
  // durable. Several threads may sync at once; each returns once its own commit is on disk.
  if (::fdatasync(wal->get()) != 0) {
    return Fail(Code::kInternal,
                "sync the state file's WAL to disk: " + ErrnoText(errno) +
                    "; the write took effect but may not survive a power loss",
                path);
  }
  return {};
}

Result<int64_t> Store::Impl::InsertEvent(const std::string& key, int64_t at, std::string_view type,
                                         std::string_view message) {
  const std::string op = "append event to " + Quoted(key);
  auto stream = conn->Prepare(kAddStream, op);
  if (!stream) return std::unexpected(std::move(stream.error()));
  stream->BindRef(1, key);
  if (auto done = stream->Run(); !done) return std::unexpected(std::move(done.error()));
  auto insert = conn->Prepare(kInsertEvent, op);
  if (!insert) return std::unexpected(std::move(insert.error()));
  insert->BindRef(1, key).Bind(2, at).BindRef(3, type).BindRef(4, message);
  if (auto done = insert->Run(); !done) return std::unexpected(std::move(done.error()));
  return conn->LastInsertRowid();
}

int Store::Impl::Committed(void* impl, sqlite3*, const char*, int frames) {
  const Impl& self = *static_cast<const Impl*>(impl);
  if (self.checkpointer != nullptr &&
      frames >= (self.unsynced ? kUnsyncedCheckpointFrames : kCheckpointFrames)) {
    self.checkpointer->Request();
  }
  return SQLITE_OK;
}

Status Store::Impl::UpdateRow(const Submission& s, const std::optional<Event>& event, int64_t now) {
  const std::string op = "update submission " + Quoted(s.key);
  {
    auto update = conn->Prepare(kUpdateSubmission, op);
    if (!update) return std::unexpected(std::move(update.error()));
    BindSubmission(*update, s, s.created_at, now, s.version);
    if (auto done = update->Run(); !done) return done;
  }
  if (conn->Changes() == 0) {
    auto select = conn->Prepare("SELECT version FROM submissions WHERE key = ?1", op);
    if (!select) return std::unexpected(std::move(select.error()));
    select->Bind(1, s.key);
    auto row = select->Step();
    if (!row) return std::unexpected(std::move(row.error()));
    if (!*row) return Fail(Code::kNotFound, op + ": no submission has that key", path);
    return Fail(Code::kConflict,
                op + ": stored version is " + std::to_string(select->Int(0)) + ", not " +
                    std::to_string(s.version) + "; it changed since it was read: Get it again",
                path);
  }
  if (event) {
    if (auto id = InsertEvent(s.key, now, event->type, event->message); !id) {
      return std::unexpected(std::move(id.error()));
    }
  }
  return {};
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

const std::string& Store::path() const { return impl_->path; }

Store::~Store() = default;

int Store::SchemaVersion() { return Migrations().back().version; }

Result<std::unique_ptr<Store>> Store::Open(const std::string& path, const Clock& clock) {
  if (path.empty()) return Fail(Code::kInvalidInput, "state file path is empty");
  const bool memory = path == kMemory;

  // Lock before touching the database, so two instances never migrate the same file at once.
  LockFile lock;
  if (!memory) {
    auto acquired = LockFile::Acquire(path);
    if (!acquired) return std::unexpected(std::move(acquired.error()));
    lock = std::move(*acquired);
    if (auto created = CreateStateFile(path); !created) return std::unexpected(created.error());
  }

  auto conn = sqlite::Connection::Open(path);
  if (!conn) return std::unexpected(std::move(conn.error()));
  sqlite::Connection& db = **conn;

  // journal_mode answers with the mode in effect: a file system without shared memory support
  // (some network mounts) stays in "delete", which we refuse rather than run without WAL.
  {
    auto mode = db.Prepare("PRAGMA journal_mode = WAL", "set journal mode");
    if (!mode) return std::unexpected(std::move(mode.error()));
    auto row = mode->Step();
    if (!row) return std::unexpected(std::move(row.error()));
    std::string got = *row ? mode->Text(0) : "";
    if (!memory && got != "wal") {
      return Fail(Code::kInternal,
                  "set journal mode: SQLite kept " + Quoted(got) +
                      " instead of 'wal'; put the state file on a local file system",
                  path);
    }
  }
  // cache_size: a pass that records 10,000 changes touches most pages of a 10,000-submission
  // file; with SQLite's default 2 MB they are read back from the OS again and again (an engine
  // pass recording them from a fake Slurm: 138 ms of CPU with 2 MB, 106 ms with 8 MB).
  if (auto done = db.Exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; "
                          "PRAGMA cache_size = -8192; PRAGMA busy_timeout = " +
                              std::to_string(kBusyTimeoutMs),
                          "configure connection");
      !done) {
    return std::unexpected(std::move(done.error()));
  }
  if (auto migrated = Migrate(db); !migrated) return std::unexpected(std::move(migrated.error()));

  auto impl = std::make_unique<Impl>(path, clock, std::move(lock), std::move(*conn));
  if (!memory) {
    // SQLite made the WAL when it first read in WAL mode, and removes it only when the last
    // connection closes: this descriptor stays valid as long as the store is open.
    const std::string wal_path = path + "-wal";
    const int fd = ::open(wal_path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      return Fail(Code::kInternal, "cannot open the WAL " + wal_path + ": " + ErrnoText(errno),
                  path);
    }
    impl->wal.emplace(fd);
    auto checkpointer = Checkpointer::Start(path);
    if (!checkpointer) return std::unexpected(std::move(checkpointer.error()));
    impl->checkpointer = std::move(*checkpointer);
  }
  // replaces SQLite's automatic checkpoints
  sqlite3_wal_hook(impl->conn->handle(), &Impl::Committed, impl.get());
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

Status Store::Impl::AddRow(const Submission& submission, int64_t now) {
  const std::string op = "add submission " + Quoted(submission.key);
  if (submission.key.empty()) return Fail(Code::kInvalidInput, op + ": the key is empty", path);
  auto insert = conn->Prepare(kInsertSubmission, op);
  if (!insert) return std::unexpected(std::move(insert.error()));
  BindSubmission(*insert, submission, now, now, 1);
  if (auto done = insert->Run(); !done) {
    if (insert->last_rc() == SQLITE_CONSTRAINT_PRIMARYKEY) {
      return Fail(Code::kConflict, op + ": a submission with that key already exists", path);
    }
    return done;
  }
  {
    auto request = conn->Prepare(kInsertRequest, op);
    if (!request) return std::unexpected(std::move(request.error()));
    request->BindRef(1, submission.key).BindRef(2, submission.request_json);
    if (auto done = request->Run(); !done) return done;
  }
  std::string message = submission.kind + " for " + Quoted(submission.owner) + " on cloud " +
                        Quoted(submission.cloud);
  if (auto id = InsertEvent(submission.key, now, "intent", message); !id) {
    return std::unexpected(std::move(id.error()));
  }
  return {};
}

Status Store::Add(Submission& submission) {
  std::vector<Submission*> one = {&submission};
  return AddMany(one);
}

Status Store::AddMany(std::vector<Submission*>& submissions) {
  std::vector<std::pair<Record*, std::optional<Event>>> no_records;
  return AddMany(submissions, no_records);
}

Status Store::AddMany(std::vector<Submission*>& submissions,
                      std::vector<std::pair<Record*, std::optional<Event>>>& records, Sync sync) {
  if (submissions.empty() && records.empty()) return {};
  for (size_t i = 0; i < submissions.size(); ++i) {
    if (submissions[i] == nullptr) {
      return Fail(Code::kInvalidInput, "add many: item " + std::to_string(i) + " is null",
                  impl_->path);
    }
  }
  for (const auto& [record, event] : records) {
    if (record == nullptr)
      return Fail(Code::kInvalidInput, "add many: a record is null", impl_->path);
  }
  const int64_t now = UnixSeconds(impl_->clock);
  std::string op;
  if (!submissions.empty()) {
    op = submissions.size() == 1 ? "add submission " + Quoted(submissions[0]->key)
                                 : "add " + std::to_string(submissions.size()) + " submissions";
  }
  if (!records.empty()) {
    std::string put = records.size() == 1
                          ? "put " + records[0].first->kind + " " + Quoted(records[0].first->name)
                          : "put " + std::to_string(records.size()) + " records";
    op = op.empty() ? put : op + " and " + put;
  }
  Status written = impl_->Write(sync, [&]() -> Status {
    auto tx = sqlite::Transaction::Begin(*impl_->conn, op);
    if (!tx) return std::unexpected(std::move(tx.error()));
    for (const Submission* s : submissions) {
      if (auto added = impl_->AddRow(*s, now); !added) return added;
    }
    for (auto& [record, event] : records) {
      if (auto put = impl_->PutRecordRow(*record, event, now); !put) return put;
    }
    return tx->Commit(op);
  });
  if (!written) return written;
  for (Submission* s : submissions) {
    s->version = 1;
    s->created_at = now;
    s->updated_at = now;
  }
  for (auto& [record, event] : records) {
    if (record->version == 0) record->created_at = now;
    ++record->version;
    record->updated_at = now;
  }
  return {};
}

Result<Submission> Store::Get(const std::string& key) const {
  std::lock_guard guard(impl_->mu);
  const std::string op = "get submission " + Quoted(key);
  auto select = impl_->conn->Prepare(SelectSubmissions(true) + " WHERE s.key = ?1", op);
  if (!select) return std::unexpected(std::move(select.error()));
  select->Bind(1, key);
  auto row = select->Step();
  if (!row) return std::unexpected(std::move(row.error()));
  if (!*row) return Fail(Code::kNotFound, op + ": no submission has that key", impl_->path);
  return ReadSubmission(*select, impl_->path);
}

Result<std::vector<Submission>> Store::List(const ListFilter& filter) const {
  std::string sql = SelectSubmissions(filter.requests);
  std::string where;
  auto add_condition = [&where](std::string condition) {
    where += where.empty() ? " WHERE " : " AND ";
    where += condition;
  };
  int next = 1;
  int cloud_param = 0, kind_param = 0, limit_param = 0;
  if (filter.active_only) add_condition("s.phase NOT IN (" + TerminalPhaseList() + ")");
  if (!filter.cloud.empty()) {
    cloud_param = next++;
    add_condition("s.cloud = ?" + std::to_string(cloud_param));
  }
  if (!filter.kind.empty()) {
    kind_param = next++;
    add_condition("s.kind = ?" + std::to_string(kind_param));
  }
  sql += where;
  if (filter.limit > 0) {
    limit_param = next++;
    sql += " ORDER BY s.created_at DESC, s.key DESC LIMIT ?" + std::to_string(limit_param);
  } else {
    sql += " ORDER BY s.created_at, s.key";
  }

  std::lock_guard guard(impl_->mu);
  auto select = impl_->conn->Prepare(sql, "list submissions");
  if (!select) return std::unexpected(std::move(select.error()));
  if (cloud_param) select->Bind(cloud_param, filter.cloud);
  if (kind_param) select->Bind(kind_param, filter.kind);
  if (limit_param) select->Bind(limit_param, ClampLimit(filter.limit));
  std::vector<Submission> out;
  while (true) {
    auto row = select->Step();
    if (!row) return std::unexpected(std::move(row.error()));
    if (!*row) break;
    auto submission = ReadSubmission(*select, impl_->path);
    if (!submission) return std::unexpected(std::move(submission.error()));
    out.push_back(std::move(*submission));
  }
  return out;
}

Status Store::Update(Submission& submission, const std::optional<Event>& event) {
  const int64_t now = UnixSeconds(impl_->clock);
  const std::string op = "update submission " + Quoted(submission.key);
  Status written = impl_->Write(Sync::kDisk, [&]() -> Status {
    auto tx = sqlite::Transaction::Begin(*impl_->conn, op);
    if (!tx) return std::unexpected(std::move(tx.error()));
    if (auto done = impl_->UpdateRow(submission, event, now); !done) return done;
    return tx->Commit(op);
  });
  if (!written) return written;
  ++submission.version;
  submission.updated_at = now;
  return {};
}

Status Store::UpdateMany(std::vector<std::pair<Submission*, std::optional<Event>>>& updates,
                         Sync sync) {
  if (updates.empty()) return {};
  for (size_t i = 0; i < updates.size(); ++i) {
    if (updates[i].first == nullptr) {
      return Fail(Code::kInvalidInput,
                  "update many: item " + std::to_string(i) + " has no submission", impl_->path);
    }
  }
  const int64_t now = UnixSeconds(impl_->clock);
  const std::string op = "update " + std::to_string(updates.size()) + " submissions";
  Status written = impl_->Write(sync, [&]() -> Status {
    auto tx = sqlite::Transaction::Begin(*impl_->conn, op);
    if (!tx) return std::unexpected(std::move(tx.error()));
    for (const auto& [submission, event] : updates) {
      if (auto done = impl_->UpdateRow(*submission, event, now); !done) return done;
    }
    return tx->Commit(op);
  });
  if (!written) return written;
  for (auto& [submission, event] : updates) {
    ++submission->version;
    submission->updated_at = now;
  }
  return {};
}

Result<int64_t> Store::AppendEvent(const std::string& key, const std::string& type,
                                   const std::string& message) {
  Result<int64_t> id;
  // One INSERT in autocommit mode is its own transaction.
  Status written = impl_->Write(Sync::kDisk, [&]() -> Status {
    id = impl_->InsertEvent(key, UnixSeconds(impl_->clock), type, message);
    return id ? Status{} : std::unexpected(id.error());
  });
  if (!written) return std::unexpected(written.error());
  return id;
}

Result<std::vector<Event>> Store::Events(const std::string& key, int64_t after_id,
                                         size_t limit) const {
  std::string sql = "SELECT id, key, at, type, message FROM events WHERE id > ?1";
  if (!key.empty()) sql += " AND stream = (SELECT id FROM streams WHERE key = ?2)";
  sql += " ORDER BY id";
  if (limit > 0) sql += " LIMIT ?3";

  std::lock_guard guard(impl_->mu);
  auto select =
      impl_->conn->Prepare(sql, key.empty() ? "list events" : "list events of " + Quoted(key));
  if (!select) return std::unexpected(std::move(select.error()));
  select->Bind(1, after_id);
  if (!key.empty()) select->Bind(2, key);
  if (limit > 0) select->Bind(3, ClampLimit(limit));
  std::vector<Event> out;
  while (true) {
    auto row = select->Step();
    if (!row) return std::unexpected(std::move(row.error()));
    if (!*row) break;
    out.push_back(Event{.id = select->Int(0),
                        .key = select->Text(1),
                        .at = select->Int(2),
                        .type = select->Text(3),
                        .message = select->Text(4)});
  }
  return out;
}

Status Store::SetMeta(const std::string& name, const std::string& value) {
  return impl_->Write(Sync::kDisk, [&]() -> Status {
    auto upsert = impl_->conn->Prepare(
        "INSERT INTO meta (name, value) VALUES (?1, ?2) "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        "set meta " + Quoted(name));
    if (!upsert) return std::unexpected(std::move(upsert.error()));
    upsert->Bind(1, name).Bind(2, value);
    return upsert->Run();
  });
}

Result<std::optional<std::string>> Store::GetMeta(const std::string& name) const {
  std::lock_guard guard(impl_->mu);
  auto select =
      impl_->conn->Prepare("SELECT value FROM meta WHERE name = ?1", "get meta " + Quoted(name));
  if (!select) return std::unexpected(std::move(select.error()));
  select->Bind(1, name);
  auto row = select->Step();
  if (!row) return std::unexpected(std::move(row.error()));
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(select->Text(0));
}

// Inside the caller's transaction; sets record's version and times only in memory on success of
// the row, so the caller commits before trusting them.
Status Store::Impl::PutRecordRow(Record& record, const std::optional<Event>& event, int64_t now) {
  const std::string op = "put " + record.kind + " " + Quoted(record.name);
  if (record.kind.empty() || record.name.empty()) {
    return Fail(Code::kInvalidInput, op + ": kind and name must not be empty", path);
  }
  const bool insert = record.version == 0;
  const int64_t created_at = insert ? now : record.created_at;
  {
    auto query = conn->Prepare(
        insert ? "INSERT INTO records (kind, name, cloud, active, doc, version, created_at, "
                 "updated_at) VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?7)"
               : "UPDATE records SET cloud = ?3, active = ?4, doc = ?5, version = version + 1, "
                 "updated_at = ?7 WHERE kind = ?1 AND name = ?2 AND version = ?8",
        op);
    if (!query) return std::unexpected(std::move(query.error()));
    query->Bind(1, record.kind)
        .Bind(2, record.name)
        .Bind(3, record.cloud)
        .Bind(4, int64_t{record.active ? 1 : 0})
        .Bind(5, record.doc)
        .Bind(7, now);
    if (insert) {
      query->Bind(6, created_at);
    } else {
      query->Bind(8, record.version);
    }
    if (auto done = query->Run(); !done) {
      if (query->last_rc() == SQLITE_CONSTRAINT_PRIMARYKEY) {
        return Fail(Code::kConflict, op + ": it already exists", path);
      }
      return done;
    }
  }
  if (!insert && conn->Changes() == 0) {
    return Fail(Code::kConflict,
                op + ": the stored version is not " + std::to_string(record.version) +
                    " (or it is gone); it changed since it was read",
                path);
  }
  if (event) {
    if (auto id = InsertEvent(record.name, now, event->type, event->message); !id) {
      return std::unexpected(std::move(id.error()));
    }
  }
  return {};
}

Status Store::PutRecord(Record& record, const std::optional<Event>& event) {
  std::vector<std::pair<Record*, std::optional<Event>>> one = {{&record, event}};
  return PutRecords(one);
}

Status Store::PutRecords(std::vector<std::pair<Record*, std::optional<Event>>>& records) {
  std::vector<Submission*> none;
  return AddMany(none, records);
}

Result<Record> Store::GetRecord(const std::string& kind, const std::string& name) const {
  std::lock_guard guard(impl_->mu);
  const std::string op = "get " + kind + " " + Quoted(name);
  auto select = impl_->conn->Prepare(
      "SELECT kind, name, cloud, active, doc, version, created_at, updated_at FROM records "
      "WHERE kind = ?1 AND name = ?2",
      op);
  if (!select) return std::unexpected(std::move(select.error()));
  select->Bind(1, kind).Bind(2, name);
  auto row = select->Step();
  if (!row) return std::unexpected(std::move(row.error()));
  if (!*row) return Fail(Code::kNotFound, op + ": there is none", impl_->path);
  return ReadRecord(*select);
}

Result<std::vector<Record>> Store::ListRecords(const std::string& kind, bool active_only) const {
  std::lock_guard guard(impl_->mu);
  auto select = impl_->conn->Prepare(
      std::string("SELECT kind, name, cloud, active, doc, version, created_at, updated_at FROM "
                  "records WHERE kind = ?1") +
          (active_only ? " AND active = 1" : "") + " ORDER BY created_at, name",
      "list " + kind + " records");
  if (!select) return std::unexpected(std::move(select.error()));
  select->Bind(1, kind);
  std::vector<Record> out;
  while (true) {
    auto row = select->Step();
    if (!row) return std::unexpected(std::move(row.error()));
    if (!*row) break;
    out.push_back(ReadRecord(*select));
  }
  return out;
}

// How many keys one PruneHistory transaction looks at, and the pause after it, in which the other
// threads' writes take the store's lock. Removing a key with its record costs 40-100 us (its rows
// sit at random places of the submissions', requests', records' and streams' indexes), so a
// transaction holds the lock for 3-6 ms, about what a tracking pass's commit does.
constexpr int64_t kPruneBatch = 64;
constexpr auto kPrunePause = std::chrono::milliseconds(1);

Result<PruneCounts> Store::PruneHistory(int64_t before) {
  const std::string op = "prune history";
  const std::string alive_sql =
      "SELECT EXISTS (SELECT 1 FROM submissions WHERE key = ?1 AND (phase NOT IN (" +
      TerminalPhaseList() +
      ") OR updated_at >= ?2)) OR EXISTS (SELECT 1 FROM records WHERE name = ?1 AND (active = 1 "
      "OR updated_at >= ?2)) OR EXISTS (SELECT 1 FROM events WHERE stream = ?3 AND at >= ?2)";
  PruneCounts counts;
  int64_t after_stream = 0;  // the last stream looked at
  bool finished = false;
  while (!finished) {
    PruneCounts batch;
    int64_t last_stream = after_stream;
    Status written = impl_->Write(Sync::kProcess, [&]() -> Status {
      batch = {};
      last_stream = after_stream;
      finished = false;
      sqlite::Connection& db = *impl_->conn;
      auto tx = sqlite::Transaction::Begin(db, op);
      if (!tx) return std::unexpected(std::move(tx.error()));
      std::vector<std::pair<int64_t, std::string>> expired;  // (stream, key) first seen before
      {
        // each key with the time of its first event, in order of first sight
        auto keys = db.Prepare(
            "SELECT s.id, s.key, (SELECT at FROM events WHERE stream = s.id ORDER BY id LIMIT 1) "
            "FROM streams s WHERE s.id > ?1 ORDER BY s.id LIMIT ?2",
            op);
        if (!keys) return std::unexpected(std::move(keys.error()));
        keys->Bind(1, after_stream).Bind(2, kPruneBatch);
        int64_t seen = 0;
        while (!finished) {
          auto row = keys->Step();
          if (!row) return std::unexpected(std::move(row.error()));
          if (!*row) {
            finished = seen < kPruneBatch;
            break;
          }
          ++seen;
          last_stream = keys->Int(0);
          if (keys->Int(2) >= before) {
            finished = true;
          } else {
            expired.emplace_back(keys->Int(0), keys->Text(1));
          }
        }
      }
      // A key's rows, each table by what it is keyed on: the stream, or the key itself.
      struct Removal {
        std::string_view sql;
        bool by_stream;
        int64_t* removed;
      };
      const Removal removals[] = {
          {"DELETE FROM events WHERE stream = ?1", true, &batch.events},
          {"DELETE FROM streams WHERE id = ?1", true, nullptr},
          {"DELETE FROM requests WHERE key = ?1", false, nullptr},
          {"DELETE FROM submissions WHERE key = ?1", false, &batch.submissions},
          {"DELETE FROM records WHERE name = ?1", false, &batch.records},
      };
      for (const auto& [stream, key] : expired) {
        {
          auto alive = db.Prepare(alive_sql, op);
          if (!alive) return std::unexpected(std::move(alive.error()));
          alive->Bind(1, key).Bind(2, before).Bind(3, stream);
          auto row = alive->Step();
          if (!row) return std::unexpected(std::move(row.error()));
          if (*row && alive->Int(0) != 0) continue;
        }
        for (const Removal& r : removals) {
          auto del = db.Prepare(r.sql, op);
          if (!del) return std::unexpected(std::move(del.error()));
          if (r.by_stream) {
            del->Bind(1, stream);
          } else {
            del->Bind(1, key);
          }
          if (auto ran = del->Run(); !ran) return ran;
          if (r.removed) *r.removed += db.Changes();
        }
        ++batch.keys;
      }
      if (finished) {
        auto eventless = db.Prepare(
            "DELETE FROM records WHERE active = 0 AND updated_at < ?1 AND NOT EXISTS (SELECT 1 "
            "FROM streams WHERE streams.key = records.name)",
            op);
        if (!eventless) return std::unexpected(std::move(eventless.error()));
        eventless->Bind(1, before);
        if (auto ran = eventless->Run(); !ran) return ran;
        batch.records += db.Changes();
      }
      return tx->Commit(op);
    });
    if (!written) return std::unexpected(written.error());
    counts.keys += batch.keys;
    counts.submissions += batch.submissions;
    counts.records += batch.records;
    counts.events += batch.events;
    after_stream = last_stream;
    if (!finished) std::this_thread::sleep_for(kPrunePause);
  }
  return counts;
}

Result<int64_t> Store::LastEventId() const {
  std::lock_guard guard(impl_->mu);
  auto select =
      impl_->conn->Prepare("SELECT COALESCE(MAX(id), 0) FROM events", "read the last event id");
  if (!select) return std::unexpected(std::move(select.error()));
  auto row = select->Step();
  if (!row) return std::unexpected(std::move(row.error()));
  return *row ? select->Int(0) : int64_t{0};
}

}  // namespace slurmfleet::store
