// Client: the Jenkins HTTP API calls slurmfleet makes (research/jenkins/CONTRACT.md §9), as an
// interface so the provisioner can be unit-tested with a fake. HttpClient (http_client.h) is the
// implementation; it authenticates with a user and API token (Basic), so no crumb is needed.
//
// Errors, by what the caller does next:
//   kAuth         401 (wrong user or token)
//   kRejected     403 (a permission is missing: the message names X-Required-Permission), and
//                 400s whose X-Error says why
//   kNotFound     404 (the node, queue item or run does not exist)
//   kConflict     CreateNode: a node of that name already exists
//   kUnavailable  connection refused, timeouts of reads, 5xx: back off and retry
//   kUnknownOutcome  a POST that may have landed (timeout or reset after sending)
// No message ever holds the API token or an agent secret.
//
// Thread safety: implementations are safe to call from any thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/secret.h"
#include "jenkins/model.h"

namespace slurmfleet::jenkins {

class Client {
 public:
  virtual ~Client() = default;

  // GET /api/json?tree=quietingDown,url with its X-Jenkins and X-Jenkins-Session headers.
  virtual Result<ControllerInfo> Discover() = 0;

  // GET /queue/api/json with the tree= of the contract, sent with Accept-Language: en so `why`
  // is English. Items carry task.labelExpression as their label when the task exports one.
  virtual Result<std::vector<QueueItem>> Queue() = 0;

  // POST /scriptText with the contract's script: queue id -> exact label expression ("" for
  // items that may roam). kRejected when the account may not administer Jenkins.
  virtual Result<std::map<int64_t, std::string>> ExactLabels() = 0;

  // GET /computer/api/json?tree=computer[...]: every node, the built-in one included.
  virtual Result<std::vector<Computer>> Computers() = 0;

  // GET /computer/<name>/api/json. kNotFound when it does not exist.
  virtual Result<Computer> GetComputer(const std::string& name) = 0;

  // POST /computer/doCreateItem (type hudson.slaves.DumbSlave, JNLPLauncher with webSocket,
  // RetentionStrategy$Always). kConflict when the name is taken.
  virtual Status CreateNode(const NodeSpec& node) = 0;

  // GET /computer/<name>/jenkins-agent.jnlp: the first <argument>, 64 hex characters.
  virtual Result<Secret> AgentSecret(const std::string& name) = 0;

  // POST /computer/<name>/changeOfflineCause: idempotently marks the node temporarily offline
  // with `message`, so it takes no new build. kNotFound when the node is gone.
  virtual Status Drain(const std::string& name, const std::string& message) = 0;

  // Sets the node's description (what the Jenkins UI shows under its name), e.g. to name the
  // Slurm job the node runs in, which is known only after the node exists. GET
  // /computer/<name>/config.xml (Computer.EXTENDED_READ), replace the text of the top-level
  // <description> element of its <slave> (insert one after <name> when there is none), and POST
  // the document back to the same URL as application/xml (Computer.CONFIGURE): nothing else in
  // the XML is touched. `description` is plain text; it is XML-escaped. kNotFound when the node is
  // gone (before or between the two requests).
  virtual Status SetDescription(const std::string& name, const std::string& description) = 0;

  // POST /computer/<name>/doDelete. kNotFound when it is already gone.
  virtual Status DeleteNode(const std::string& name) = 0;

  // GET /queue/item/<id>/api/json?tree=cancelled,executable[url]. kNotFound once Jenkins forgot
  // the item (5 minutes after it left the queue).
  virtual Result<ItemFate> Fate(int64_t queue_id) = 0;

  // GET <run url>api/json?tree=building,result,builtOn. `run_url` is absolute, as Jenkins wrote
  // it (with its configured root URL): it is asked of this Jenkins by its path. kInvalidInput for
  // a URL that is not a run of a job.
  virtual Result<RunInfo> Run(const std::string& run_url) = 0;

  // GET /label/<expression>/api/json with the load statistics' latest 10 s sample.
  virtual Result<LabelLoad> Label(const std::string& expression) = 0;
};

}  // namespace slurmfleet::jenkins
