// The stand-in Jenkins controller: test-only. A real Jenkins cannot run on the test machines, so
// this in-process HTTP server answers the part of Jenkins' HTTP API that slurmfleet uses, the way
// /work/shared/research/jenkins/CONTRACT.md describes it (paths, `tree=` pruning, status codes,
// `X-Error` texts, `why` strings, Basic auth with an API token, `X-Jenkins-Session`), and accepts
// inbound agents on `/wsagents/` (tests/jenkins/standin/standin-java plays agent.jar). Production
// code never knows about it: it only ever sees "a Jenkins" at a URL.
//
// It keeps a small model of a controller: agent nodes, a build queue, jobs and their runs, and a
// scheduler thread that moves queue items onto idle executors of connected, matching nodes the way
// Jenkins' Queue.maintain() does. Builds do nothing but last for their given duration.
//
// Simplified compared to Jenkins: builds only last their duration; items are never merged (every
// enqueue is a new item); `pending` is always false (assignment is immediate); `why` is worked out
// when asked for, from the nodes as they are then (Jenkins computes the causes in maintain());
// loadStatistics other than a label's queueLength show current counts, not averages; a Pipeline
// block whose agent is lost keeps its executor and finishes once the agent is back (Jenkins may
// also give up on it later), and ends ABORTED when its node is deleted; after Restart() it goes
// back to the queue with a new id; a node's
// absoluteRemotePath is its remoteFS; one permission set (the configured user may do everything
// but /scriptText when administer is false); the /wsagents/ connection carries no remoting
// protocol, only pings; JSON shows only the fields the contract uses plus common neighbours;
// POST /computer/<n>/config.xml refuses a rename (another <name>) with 400 and keeps the launcher
// when the XML leaves it out; localised texts exist in English and German only (another
// Accept-Language gets Options::default_locale).
// cpp-httplib reads a POST without Content-Length until its 5-s read timeout and answers 400;
// libcurl always sends one.
//
// Thread safety: every public method may be called from any thread, concurrently with HTTP
// requests. Destroying the object stops the server, drops every agent connection and joins all
// threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace slurmfleet::standin {

class JenkinsStandin {
 public:
  struct Options {
    std::string user = "admin";
    // "11" + 32 lowercase hex, like ApiTokenStore.generateNewToken; empty: a random one.
    std::string api_token;
    // false: POST /scriptText answers 403 with X-Required-Permission (no Overall/Administer).
    bool administer = true;
    std::string host = "127.0.0.1";  // listen address; url() always names 127.0.0.1
    int port = 0;                    // 0: an ephemeral port
    // Jenkins' default is 5 s; 0 makes new items buildable at the next scheduler pass (~50 ms).
    std::chrono::milliseconds quiet_period{0};
    std::string version = "2.541.1";  // the X-Jenkins header
    // Worker threads of the HTTP server. Every connected agent holds one for as long as it is
    // connected, so this bounds connected agents plus concurrent API requests.
    int worker_threads = 128;
    // LoadStatistics.CLOCK: how often a label's queue length average takes a sample (h = 0.9h +
    // 0.1x). Jenkins' is 10 s.
    std::chrono::milliseconds load_sample_interval{10000};
    // The controller JVM's default locale, "en" or "de" (Start() refuses others). Jenkins words
    // `why` texts and X-Error headers in the request's locale: the Accept-Language entry of the
    // highest quality, or this one when the request names none (or a language other than these
    // two). German by default, so that a client that parses the texts without sending
    // `Accept-Language: en` (CONTRACT.md §2.3) fails here, as it would on a German controller.
    std::string default_locale = "de";
  };

  struct NodeInfo {
    std::string name;
    std::vector<std::string> labels;  // from labelString, sorted, without the self-label
    std::string description;
    std::string remote_fs;
    int num_executors = 1;
    bool exclusive = false;  // mode EXCLUSIVE
    bool connected = false;  // an agent connection is up right now
    bool building = false;   // some executor runs a build
    bool temporarily_offline = false;
    std::string offline_message;  // the temporarily-offline cause's message
    int64_t connections = 0;      // agent connections accepted for this node so far
  };

  struct BuildInfo {
    std::string job;  // "folder/sub/job"
    int number = 0;
    bool pipeline = false;
    std::string result;    // "" while running, else SUCCESS, FAILURE or ABORTED
    std::string built_on;  // node name; "" for a Pipeline run still waiting for its node
    int64_t queue_id = 0;
    std::chrono::system_clock::time_point started;
    std::chrono::system_clock::time_point ended;  // epoch while running
  };

  struct RequestInfo {
    std::string method;
    std::string path;  // decoded, without the query string
    int status = 0;
  };

  struct Snapshot {
    std::string session;            // the current X-Jenkins-Session
    std::vector<NodeInfo> nodes;    // sorted by name
    size_t max_nodes_seen = 0;      // high-water mark of nodes existing at once
    size_t max_connected_seen = 0;  // high-water mark of nodes connected at once
    size_t nodes_created = 0;
    size_t nodes_deleted = 0;
    size_t agent_connections = 0;  // successful /wsagents/ handshakes, all nodes, all time
    std::vector<BuildInfo> running_builds;
    std::vector<BuildInfo> completed_builds;  // in the order they ended
    size_t queue_length = 0;                  // items in the queue, of any kind
    std::vector<RequestInfo> requests;        // every request, in arrival order

    const NodeInfo* FindNode(std::string_view name) const;
    size_t ConnectedNodes() const;
    // Requests with this method whose path is `path` (or, with a trailing '*', starts with it).
    size_t CountRequests(std::string_view method, std::string_view path) const;
  };

  // Listens and starts the scheduler. nullptr, with the reason on stderr, when the address
  // cannot be bound.
  static std::unique_ptr<JenkinsStandin> Start(Options options);
  ~JenkinsStandin();
  JenkinsStandin(const JenkinsStandin&) = delete;
  JenkinsStandin& operator=(const JenkinsStandin&) = delete;

  std::string url() const;  // "http://127.0.0.1:PORT/", with the trailing slash
  int port() const;
  const std::string& user() const;
  const std::string& api_token() const;
  // The node's agent secret, as its JNLP file carries it: HMAC-SHA256 of the name under this
  // instance's key, 64 lowercase hex; the same for the same name, whether the node exists or not.
  std::string SecretFor(std::string_view node_name) const;

  // Queue a freestyle build of `job_path` ("folder/sub/job"; created on first use) restricted to
  // `label_expression` ("" for none) that lasts `duration` once it runs. Every call makes a new
  // queue item (as a parameterized job with distinct parameters would). Returns the queue id.
  int64_t EnqueueFreestyle(std::string job_path, std::string label_expression,
                           std::chrono::milliseconds duration);
  // Start a Pipeline run of `job_path` whose node('label') block waits in the queue as a
  // PlaceholderTask (whose only label is in `why`). The run ends when the block has run for
  // `duration` on an agent. Returns the queue id.
  int64_t EnqueuePipeline(std::string job_path, std::string label_expression,
                          std::chrono::milliseconds duration);
  // Freestyle jobs allow concurrent builds unless this says otherwise; then an item of a job
  // with a running build is a Queue$BlockedItem ("Build #N is already in progress").
  void SetConcurrentBuild(const std::string& job_path, bool concurrent);
  // Cancels a queue item as POST /queue/cancelItem does. False if no such item is queued.
  bool CancelItem(int64_t queue_id);

  // A controller restart: a new X-Jenkins-Session, every agent connection dropped, running
  // freestyle builds end ABORTED, running Pipeline node blocks go back to the queue (new id);
  // nodes, the queue and the queue-id counter persist.
  void Restart();
  void SetQuietingDown(bool quieting_down);
  void SetAdminister(bool administer);
  // Drops the node's agent connection, as a broken channel would. False if it had none.
  bool DisconnectAgent(const std::string& name);

  Snapshot Stats() const;
  // The snapshot as one JSON line (request counts per "METHOD path" instead of the full log),
  // as GET /standin/stats serves it.
  std::string StatsJson() const;
  // Polls `predicate` on fresh snapshots until it holds (true) or `timeout` passes (false).
  bool WaitFor(const std::function<bool(const Snapshot&)>& predicate,
               std::chrono::milliseconds timeout) const;

  class Impl;

 private:
  explicit JenkinsStandin(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace slurmfleet::standin
