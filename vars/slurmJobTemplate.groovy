// slurmJobTemplate: an ephemeral slurmfleet job template scoped to a pipeline block.
//
//   slurmJobTemplate(cloud: 'my-cluster', json: '{"job": {"partition": "gpu"}}') {
//       node(SLURM_LABEL) { sh 'nvidia-smi' }
//   }
//
// Registers the template with the slurmfleet daemon (POST api/v1/templates), runs the body with
// SLURM_LABEL (and SLURM_TEMPLATE, SLURM_CLOUD) in its environment, and deletes the template in a
// `finally` (DELETE api/v1/templates/<name>), also when the body fails or the build is aborted.
// The body's error is rethrown unchanged. While the body runs, a daemon thread on the controller
// extends the template's TTL (POST api/v1/templates/<name>/touch) every third of the TTL the daemon
// set, so a long queue wait does not let it expire; the TTL stays the safety net when the release
// never happens (controller killed).
//
// Arguments (see slurmJobTemplate.txt and docs/pipelines.md):
//   cloud          required  a cloud configured in slurmfleet
//   json           required  the inline template: JSON text (or a Map, serialized as JSON)
//   ttlSeconds     optional  lifetime without use; not sent when not given, so the daemon's
//                            jenkins.ephemeralTemplateTtlSeconds applies (it clamps to 60 s - 7 days)
//   daemonUrl      optional  default: the SLURMFLEET_URL environment variable
//   credentialsId  optional  a Secret Text credential holding an API token of templates (or
//                            admin) scope, default 'slurmfleet-api-token'
//   touchIntervalSeconds optional  seconds between TTL extensions, less than the TTL; default a
//                            third of the TTL in the daemon's answer, at least 20 s; 0 = off
//   partition, workingDir, javaPath, jarPath, downloadJar, setupScript  optional
//                  the plugin's declarative properties: each sets one key of the inline template
//                  (job.partition, job.current_working_directory, agent.java_path, agent.jar_path,
//                  agent.download_jar, agent.setup_script); json is then optional
//
// slurmJobTemplate.printSlurmJob(), inside node(SLURM_LABEL), prints "Submitted Slurm job N" for
// the agent the block runs on (slurmAgent does it by itself).
//
// Runs on the controller from a trusted global library: the HTTP calls use HttpURLConnection in
// @NonCPS methods. Those block the build's CPS VM thread (an abort waits for them), so each request
// has short timeouts and one call with its retries is bounded (sjtLimits). Steps (echo, error,
// withCredentials, withEnv) are only called from CPS code.
// The API token is read inside withCredentials and handed straight to @NonCPS methods; it is
// never kept in a CPS local variable (those are written to disk), echoed or put in a message.

import groovy.json.JsonOutput
import groovy.json.JsonSlurperClassic

def call(Map args = [:], Closure body) {
    if (body == null) {
        error(sjtNoBody())
    }
    Map checked = sjtCheckArgs(args == null ? [:] : args)
    if (checked.problem) {
        error(checked.problem)
    }
    String urlProblem = null
    if (checked.daemonUrl == null) {
        checked.daemonUrl = env.SLURMFLEET_URL
        urlProblem = sjtCheckUrl(checked.daemonUrl, 'the SLURMFLEET_URL environment variable')
    } else {
        urlProblem = sjtCheckUrl(checked.daemonUrl, 'the daemonUrl argument')
    }
    if (urlProblem) {
        error(urlProblem)
    }
    checked.daemonUrl = sjtBaseUrl(checked.daemonUrl)
    String owner = "${env.JOB_NAME ?: 'unknown job'} #${env.BUILD_NUMBER ?: '?'}".toString()
    String requestBody = sjtRegisterBody(checked, owner, env.JOB_NAME)

    Map answer = null
    Map touch = null
    try {
        sjtWithToken(checked.credentialsId) {
            answer = sjtRegister(checked.daemonUrl, env.SLURMFLEET_API_TOKEN, requestBody, checked.cloud)
            if (answer.ok) {
                touch = sjtTouchPlan(checked, answer.expiresAtUnix)
                if (!touch.problem && touch.intervalSeconds > 0) {
                    touch.started = sjtStartTouch(checked.daemonUrl, env.SLURMFLEET_API_TOKEN, answer.name,
                                                  touch.intervalSeconds)
                }
            }
        }
        if (!answer.ok) {
            error(sjtDescribeFailure('could not register the template', answer, checked))
        }
        if (touch.problem) {
            error(touch.problem)  // the finally below releases the template again
        }
        echo("slurmJobTemplate: registered template ${answer.name} on cloud '${answer.cloud}', label ${answer.label}" +
             (answer.expiresAt ? ", expires ${answer.expiresAt} unless in use" : '') + sjtDescribeTouch(touch))
        return withEnv(["SLURM_LABEL=${answer.label}", "SLURM_TEMPLATE=${answer.name}", "SLURM_CLOUD=${answer.cloud}"]) {
            body()
        }
    } finally {
        // Also reached when the body failed or the build was aborted; the body's error goes on.
        if (answer != null && answer.ok) {
            sjtStopTouch(answer.name)
            sjtRelease(checked, answer.name)
        }
    }
}

// Inside a node block on a slurmfleet agent: prints "Submitted Slurm job N" and where, as the
// plugin's build console does. Asks the daemon (GET api/v1/agents/<NODE_NAME>) with the same
// daemonUrl and credentialsId arguments as the step. Never fails the build (only an abort goes on):
// a daemon or credential that cannot answer only costs the line, replaced by why.
def printSlurmJob(Map args = [:]) {
    Map given = args == null ? [:] : args
    String nodeName = env.NODE_NAME
    if (!nodeName || nodeName == 'built-in' || nodeName == 'master') {
        echo('slurmJobTemplate.printSlurmJob: not inside a node block on a slurmfleet agent; call it inside ' +
             'node(SLURM_LABEL) { ... }')
        return null
    }
    String daemonUrl = given.daemonUrl == null ? env.SLURMFLEET_URL : given.daemonUrl.toString()
    String credentialsId = given.credentialsId == null ? 'slurmfleet-api-token' : given.credentialsId.toString()
    String urlProblem = sjtCheckUrl(daemonUrl, given.daemonUrl == null ? 'the SLURMFLEET_URL environment variable'
                                                                       : 'the daemonUrl argument')
    if (urlProblem) {
        echo(urlProblem.replaceFirst('^slurmJobTemplate: ', 'slurmJobTemplate: cannot show the Slurm job: '))
        return null
    }
    Map answer = null
    try {
        sjtWithToken(credentialsId) {
            answer = sjtAgent(sjtBaseUrl(daemonUrl), env.SLURMFLEET_API_TOKEN, nodeName)
        }
    } catch (e) {
        if (e.getClass().getName().endsWith('FlowInterruptedException')) {
            throw e
        }
        answer = [failure: e.getMessage() ?: sjtSafeMessage(e)]
    }
    echo(sjtDescribeAgent(nodeName, answer, sjtRedactUrl(daemonUrl)))
    return answer.jobId
}

// Without a body block Groovy would only say "No signature of method".
def call(Map args) {
    error(sjtNoBody())
}

@NonCPS
String sjtNoBody() {
    return 'slurmJobTemplate: missing the body block; write ' +
           "slurmJobTemplate(cloud: 'my-cluster', json: '{...}') { node(SLURM_LABEL) { ... } }"
}

// Deletes the template; never throws (a failed release only leaves the template to its TTL),
// except for an abort of the build, which must still end it.
def sjtRelease(Map checked, String name) {
    Map answer = null
    try {
        sjtWithToken(checked.credentialsId) {
            answer = sjtDelete(checked.daemonUrl, env.SLURMFLEET_API_TOKEN, name)
        }
    } catch (e) {
        if (e.getClass().getName().endsWith('FlowInterruptedException')) {
            throw e
        }
        answer = [ok: false, failure: sjtSafeMessage(e)]
    }
    if (answer.ok) {
        echo("slurmJobTemplate: released template ${name}")
    } else {
        String why = sjtDescribeFailure("could not delete template ${name}", answer, checked)
        echo(why.replaceFirst('^slurmJobTemplate: ', 'slurmJobTemplate: WARNING: ') +
             '. It is removed by the daemon when its TTL runs out.')
    }
}

// Binds the Secret Text credential to SLURMFLEET_API_TOKEN for the block only. The user's body
// never runs inside it, so its `sh` steps cannot see the token.
def sjtWithToken(String credentialsId, Closure block) {
    try {
        withCredentials([string(credentialsId: credentialsId, variable: 'SLURMFLEET_API_TOKEN')]) {
            if (!env.SLURMFLEET_API_TOKEN) {
                error("slurmJobTemplate: the credential '${credentialsId}' is empty; store a slurmfleet API token " +
                      "of templates (or admin) scope in it as Secret Text")
            }
            block()
        }
    } catch (e) {
        if (e.getClass().getName().endsWith('CredentialNotFoundException')) {
            error("slurmJobTemplate: no credential '${credentialsId}' found (${sjtSafeMessage(e)}). Add a Secret Text " +
                  "credential with that ID holding a slurmfleet API token with templates (or admin) scope, or pass " +
                  "credentialsId: to name another one")
        }
        throw e
    }
}

// ---- everything below is @NonCPS: plain Groovy, no pipeline steps --------------------------

@NonCPS
Map sjtCheckArgs(Map args) {
    List known = ['cloud', 'json', 'ttlSeconds', 'daemonUrl', 'credentialsId', 'touchIntervalSeconds'] +
                 sjtPropertyKeys()
    List unknown = []
    for (Object k : args.keySet()) {
        if (!known.contains(k.toString())) {
            unknown << k.toString()
        }
    }
    if (!unknown.isEmpty()) {
        return [problem: "slurmJobTemplate: unknown argument${unknown.size() > 1 ? 's' : ''} " +
                         unknown.collect { "'${it}'" }.join(', ') + '; the arguments are ' + known.join(', ')]
    }
    Object cloud = args.cloud
    if (cloud == null || !(cloud instanceof CharSequence) || cloud.toString().trim().isEmpty()) {
        return [problem: "slurmJobTemplate: missing the cloud argument: name a cloud configured in slurmfleet, " +
                         "e.g. slurmJobTemplate(cloud: 'my-cluster', json: '{\"job\": {...}}') { ... }"]
    }
    boolean hasProperties = sjtPropertyKeys().any { args.containsKey(it) }
    Object json = args.json
    String jsonText = null
    if (json instanceof Map) {
        jsonText = JsonOutput.toJson(json)
    } else if (json instanceof CharSequence && !json.toString().trim().isEmpty()) {
        jsonText = json.toString()
    } else if (json == null && hasProperties) {
        jsonText = '{}'
    } else {
        return [problem: "slurmJobTemplate: missing the json argument: give the inline template as JSON text, " +
                         "e.g. json: '{\"job\": {\"partition\": \"gpu\", \"cpus_per_task\": 8}}', or " +
                         'properties such as partition: and workingDir:']
    }
    Object parsed = null
    try {
        parsed = new JsonSlurperClassic().parseText(jsonText)
    } catch (Exception e) {
        return [problem: "slurmJobTemplate: the json argument is not valid JSON (${e.getMessage()}); " +
                         "it must be an object such as {\"job\": {\"partition\": \"gpu\"}}"]
    }
    if (!(parsed instanceof Map)) {
        return [problem: 'slurmJobTemplate: the json argument must be a JSON object such as ' +
                         '{"job": {"partition": "gpu"}}, not ' + (parsed instanceof List ? 'an array' : 'a scalar')]
    }
    if (hasProperties) {
        String problem = sjtApplyProperties(args, (Map) parsed)
        if (problem) {
            return [problem: problem]
        }
        jsonText = JsonOutput.toJson(parsed)
    }
    // Without ttlSeconds none is sent: the daemon's jenkins.ephemeralTemplateTtlSeconds applies.
    Long ttl = null
    if (args.containsKey('ttlSeconds')) {
        ttl = sjtPositiveInt(args.ttlSeconds)
        if (ttl == null || ttl <= 0) {
            return [problem: "slurmJobTemplate: ttlSeconds must be a positive whole number of seconds, not '${args.ttlSeconds}'"]
        }
    }
    // Without touchIntervalSeconds the interval comes from the TTL in the daemon's answer (sjtTouchPlan).
    Long interval = null
    if (args.containsKey('touchIntervalSeconds')) {
        interval = sjtPositiveInt(args.touchIntervalSeconds)
        if (interval == null) {
            return [problem: "slurmJobTemplate: touchIntervalSeconds must be a whole number of seconds (0 turns " +
                             "TTL extension off), not '${args.touchIntervalSeconds}'"]
        }
        if (ttl != null && interval > 0 && interval >= ttl) {
            return [problem: "slurmJobTemplate: touchIntervalSeconds (${interval}) must be less than ttlSeconds " +
                             "(${ttl}), or the template expires between two extensions; leave " +
                             'touchIntervalSeconds out to extend it every third of its TTL']
        }
    }
    Object credentialsId = args.containsKey('credentialsId') ? args.credentialsId : 'slurmfleet-api-token'
    if (!(credentialsId instanceof CharSequence) || credentialsId.toString().trim().isEmpty()) {
        return [problem: 'slurmJobTemplate: credentialsId must name a Secret Text credential, e.g. ' +
                         "credentialsId: 'slurmfleet-api-token'"]
    }
    Object daemonUrl = args.daemonUrl
    if (args.containsKey('daemonUrl') && !(daemonUrl instanceof CharSequence && daemonUrl.toString().trim())) {
        return [problem: "slurmJobTemplate: daemonUrl must be the slurmfleet URL, e.g. daemonUrl: 'http://slurmfleet:8470/'"]
    }
    return [cloud: cloud.toString().trim(), json: jsonText, ttlSeconds: ttl, touchIntervalSeconds: interval,
            credentialsId: credentialsId.toString().trim(), daemonUrl: daemonUrl == null ? null : daemonUrl.toString().trim()]
}

// The plugin's declarative properties, each the short form of one key of the inline JSON.
@NonCPS
Map sjtProperties() {
    return [partition   : ['job', 'partition'],
            workingDir  : ['job', 'current_working_directory'],
            javaPath    : ['agent', 'java_path'],
            jarPath     : ['agent', 'jar_path'],
            downloadJar : ['agent', 'download_jar'],
            setupScript : ['agent', 'setup_script']]
}

@NonCPS
List sjtPropertyKeys() {
    return new ArrayList(sjtProperties().keySet())
}

// Writes the properties given into the parsed inline template. A property that contradicts the
// json argument is refused rather than silently winning: the two are written side by side.
@NonCPS
String sjtApplyProperties(Map args, Map doc) {
    for (Map.Entry p : sjtProperties().entrySet()) {
        String property = p.key
        if (!args.containsKey(property)) {
            continue
        }
        Object value = args[property]
        String section = p.value[0]
        String key = p.value[1]
        if (property == 'downloadJar') {
            if (!(value instanceof Boolean)) {
                return "slurmJobTemplate: downloadJar must be true or false, not '${value}'"
            }
        } else if (!(value instanceof CharSequence) || value.toString().trim().isEmpty()) {
            return "slurmJobTemplate: ${property} must be a non-empty string, e.g. " + sjtPropertyExample(property)
        } else {
            value = property == 'setupScript' ? value.toString() : value.toString().trim()
        }
        Object block = doc[section]
        if (block == null) {
            block = [:]
            doc[section] = block
        } else if (!(block instanceof Map)) {
            return "slurmJobTemplate: the json argument's \"${section}\" must be an object to add ${property} to it"
        }
        if (block.containsKey(key) && block[key] != value) {
            return "slurmJobTemplate: ${property} '${value}' contradicts json ${section}.${key} '${block[key]}'; " +
                   'give it in one place only'
        }
        block[key] = value
    }
    return null
}

@NonCPS
String sjtPropertyExample(String property) {
    switch (property) {
        case 'partition': return "partition: 'compute'"
        case 'workingDir': return "workingDir: '/tmp/jenkins'"
        case 'javaPath': return "javaPath: '/opt/jenkins/jdk-17/bin/java'"
        case 'jarPath': return "jarPath: '/opt/jenkins/agent.jar'"
        default: return "setupScript: 'module load java/21'"
    }
}

@NonCPS
Long sjtPositiveInt(Object v) {
    if (v instanceof Integer || v instanceof Long || v instanceof Short) {
        return ((Number) v).longValue() >= 0 ? ((Number) v).longValue() : null
    }
    if (v instanceof CharSequence && v.toString().trim() ==~ /\d{1,12}/) {
        return Long.parseLong(v.toString().trim())
    }
    return null
}

@NonCPS
String sjtCheckUrl(String url, String source) {
    if (url == null || url.trim().isEmpty()) {
        if (source.startsWith('the SLURMFLEET_URL')) {
            return 'slurmJobTemplate: SLURMFLEET_URL is not set. Set it under Manage Jenkins → System → Global ' +
                   'properties → Environment variables to the slurmfleet daemon URL (e.g. http://slurmfleet:8470/), ' +
                   "or pass daemonUrl: to the step"
        }
        return "slurmJobTemplate: ${source} is empty"
    }
    String u = url.trim()
    if (!(u ==~ /(?i)https?:\/\/[^\s\/]+.*/)) {
        return "slurmJobTemplate: ${source} must be an http:// or https:// URL such as http://slurmfleet:8470/, " +
               "not '${sjtRedactUrl(u)}'"
    }
    return null
}

@NonCPS
String sjtBaseUrl(String url) {
    String u = url.trim()
    return u.endsWith('/') ? u : u + '/'
}

// user:password@ in a URL never reaches a message: all before the last '@' goes, since a password
// may hold an unencoded '/' (http://admin:2024/pw@host/).
@NonCPS
String sjtRedactUrl(String url) {
    if (url == null) return null
    int at = url.lastIndexOf('@')
    if (at < 0) return url
    def scheme = url =~ /^(?i)https?:\/\//
    return (scheme.find() ? scheme.group() : '') + '***' + url.substring(at)
}

// `job`, the job's full name, lets the daemon refuse a cloud restricted to other folders at once.
// ttlSeconds only when the user gave it: otherwise the daemon's configured default applies.
@NonCPS
String sjtRegisterBody(Map checked, String owner, String job) {
    Map body = [cloud: checked.cloud, json: checked.json]
    if (checked.ttlSeconds != null) {
        body.ttlSeconds = checked.ttlSeconds
    }
    body.owner = owner
    if (job) {
        body.job = job
    }
    return JsonOutput.toJson(body)
}

// This build's Run, or null. Called on the CPS VM thread, which runs with the build's
// authentication: currentBuild.rawBuild looks the build up by its ID with the calling thread's
// rights (Run.fromExternalizableId), so from a thread of our own, anonymous on a secured
// controller, it may find nothing. A Run is not serializable: it must never be kept in a CPS
// variable, only handed to the touch thread.
@NonCPS
def sjtCurrentRun() {
    try {
        return currentBuild?.rawBuild
    } catch (Exception ignored) {
        return null
    }
}

@NonCPS
String sjtSafeMessage(Throwable e) {
    String m = e.getMessage()
    return e.getClass().getSimpleName() + (m ? ': ' + m : '')
}

@NonCPS
String sjtEncode(String name) {
    return URLEncoder.encode(name, 'UTF-8').replace('+', '%20')
}

// The HTTP calls run on the build's CPS VM thread, which nothing else of the build gets while they
// wait, not even an abort: each request waits at most connectMs to connect and readMs for the
// answer, and one call with its retries ends within callBudgetMs. A retry waits at most maxWaitMs.
@NonCPS
Map sjtLimits() {
    return [connectMs: 5000L, readMs: 10000L, callBudgetMs: 30000L, maxWaitMs: 10000L]
}

// One HTTP exchange. Returns [status: int, body: String] or [transport: 'what went wrong'] when no
// HTTP answer came back. Never includes the token in anything it returns.
@NonCPS
Map sjtHttp(String method, String url, String token, String body) {
    HttpURLConnection c = null
    try {
        c = (HttpURLConnection) new URL(url).openConnection()
        c.setRequestMethod(method)
        Map limits = sjtLimits()
        c.setConnectTimeout((int) limits.connectMs)
        c.setReadTimeout((int) limits.readMs)
        c.setInstanceFollowRedirects(false)
        c.setUseCaches(false)
        c.setRequestProperty('Authorization', 'Bearer ' + token)
        c.setRequestProperty('Accept', 'application/json')
        if (body != null) {
            byte[] bytes = body.getBytes('UTF-8')
            c.setDoOutput(true)
            c.setRequestProperty('Content-Type', 'application/json')
            c.setFixedLengthStreamingMode(bytes.length)
            OutputStream os = c.getOutputStream()
            try {
                os.write(bytes)
            } finally {
                os.close()
            }
        }
        int status = c.getResponseCode()
        InputStream is = status >= 400 ? c.getErrorStream() : c.getInputStream()
        String text = ''
        if (is != null) {
            try {
                text = is.getText('UTF-8')
            } finally {
                is.close()
            }
        }
        return [status: status, body: text, retryAfter: c.getHeaderField('Retry-After')]
    } catch (Exception e) {
        return [transport: sjtSafeMessage(e)]
    } finally {
        if (c != null) {
            c.disconnect()
        }
    }
}

@NonCPS
Map sjtParseError(String text) {
    try {
        Object doc = new JsonSlurperClassic().parseText(text ?: '')
        if (doc instanceof Map && doc.error instanceof Map) {
            return [code: doc.error.code?.toString(), message: doc.error.message?.toString(),
                    where: doc.error.where?.toString()]
        }
    } catch (Exception ignored) {
    }
    String t = (text ?: '').trim()
    return [message: t.length() > 300 ? t.substring(0, 300) + '...' : t]
}

// Retries only what cannot have created anything: connection failures before any answer and 503,
// except the 503 of a daemon that does not provision agents at all (where: jenkins.url), which no
// retry changes.
@NonCPS
boolean sjtRetryable(Map r) {
    if (r.transport != null) {
        return r.transport.startsWith('ConnectException')  // refused: nothing reached the daemon
    }
    return r.status == 503 && sjtParseError(r.body).where != 'jenkins.url'
}

@NonCPS
long sjtBackoffMillis(Map r, int attempt) {
    long ms = 1000L * attempt
    if (r.retryAfter != null && r.retryAfter ==~ /\d{1,9}/) {
        ms = Math.min(sjtLimits().maxWaitMs, Long.parseLong(r.retryAfter) * 1000L)
    }
    return ms
}

// How long to wait before trying again after attempt `attempt` (from 1) answered r, elapsedMs into
// the call; -1: do not. At most three attempts, and only while one more wait and one more request
// at its longest (both timeouts) still end within the call's budget.
@NonCPS
long sjtRetryWait(Map r, int attempt, long elapsedMs) {
    if (attempt >= 3 || !sjtRetryable(r)) {
        return -1L
    }
    Map limits = sjtLimits()
    long wait = sjtBackoffMillis(r, attempt)
    if (elapsedMs + wait + limits.connectMs + limits.readMs > limits.callBudgetMs) {
        return -1L
    }
    return wait
}

// sjtHttp, tried again as sjtRetryWait says.
@NonCPS
Map sjtHttpRetrying(String method, String url, String token, String body) {
    long start = System.currentTimeMillis()
    for (int attempt = 1; ; attempt++) {
        Map r = sjtHttp(method, url, token, body)
        long wait = sjtRetryWait(r, attempt, System.currentTimeMillis() - start)
        if (wait < 0) {
            return r
        }
        Thread.sleep(wait)
    }
}

@NonCPS
Map sjtRegister(String base, String token, String body, String cloud) {
    Map r = sjtHttpRetrying('POST', base + 'api/v1/templates', token, body)
    if (r.transport != null) {
        return [ok: false, transport: r.transport]
    }
    if (r.status != 201 && r.status != 200) {
        return [ok: false, status: r.status, error: sjtParseError(r.body)]
    }
    Object doc = null
    try {
        doc = new JsonSlurperClassic().parseText(r.body ?: '')
    } catch (Exception ignored) {
    }
    if (!(doc instanceof Map) || !(doc.name instanceof String) || !(doc.label instanceof String) ||
            doc.name.isEmpty() || doc.label.isEmpty()) {
        return [ok: false, status: r.status, error: [message: 'the answer has no template name and label: ' +
                                                             sjtParseError(r.body).message]]
    }
    String expires = doc.expires_at instanceof String ? doc.expires_at : null
    Long expiresUnix = doc.expires_at_unix instanceof Number ? ((Number) doc.expires_at_unix).longValue() : null
    return [ok: true, name: doc.name, label: doc.label, cloud: doc.cloud instanceof String ? doc.cloud : cloud,
            expiresAt: expires, expiresAtUnix: expiresUnix]
}

@NonCPS
Map sjtDelete(String base, String token, String name) {
    Map r = sjtHttpRetrying('DELETE', base + 'api/v1/templates/' + sjtEncode(name), token, null)
    if (r.transport != null) {
        return [ok: false, transport: r.transport]
    }
    if (r.status == 204 || r.status == 200 || r.status == 404) {
        return [ok: true, status: r.status]
    }
    return [ok: false, status: r.status, error: sjtParseError(r.body)]
}

// GET api/v1/agents/<name>: [jobId:, cloud:, template:] or [status:/transport:, error:].
@NonCPS
Map sjtAgent(String base, String token, String name) {
    Map r = sjtHttp('GET', base + 'api/v1/agents/' + sjtEncode(name), token, null)
    if (r.transport != null || r.status != 200) {
        return r.transport != null ? [transport: r.transport] : [status: r.status, error: sjtParseError(r.body)]
    }
    Object doc = null
    try {
        doc = new JsonSlurperClassic().parseText(r.body ?: '')
    } catch (Exception ignored) {
    }
    if (!(doc instanceof Map)) {
        return [status: r.status, error: [message: 'the answer is not an agent object']]
    }
    return [jobId: doc.job_id instanceof Number ? ((Number) doc.job_id).longValue() : null,
            cloud: doc.cloud?.toString(), template: doc.template?.toString()]
}

@NonCPS
String sjtDescribeAgent(String name, Map answer, String where) {
    if (answer.jobId != null) {
        return "Submitted Slurm job ${answer.jobId} for agent ${name} (cloud '${answer.cloud}', template " +
               "${answer.template})"
    }
    String prefix = "slurmJobTemplate: cannot show the Slurm job of ${name}"
    if (answer.failure != null) {
        return "${prefix}: ${answer.failure.replaceFirst('^slurmJobTemplate: ', '')}"
    }
    if (answer.transport != null) {
        return "${prefix}: cannot reach slurmfleet at ${where} (${answer.transport})"
    }
    if (answer.status == 404) {
        return "${prefix}: slurmfleet at ${where} has no agent of that name (it is not a slurmfleet agent)"
    }
    if (answer.status == 200) {
        return "${prefix}: slurmfleet has no Slurm job id for it yet"
    }
    Map err = answer.error ?: [:]
    return "${prefix}: slurmfleet answered HTTP ${answer.status}" + (err.message ? ": ${err.message}" : '')
}

@NonCPS
String sjtDescribeFailure(String what, Map answer, Map checked) {
    String where = sjtRedactUrl(checked.daemonUrl)
    String prefix = "slurmJobTemplate: ${what}"
    if (answer.failure != null) {
        return "${prefix}: ${answer.failure}"
    }
    if (answer.transport != null) {
        return "${prefix}: cannot reach slurmfleet at ${where} (${answer.transport}). Check SLURMFLEET_URL " +
               '(or daemonUrl) and that `slurmfleet serve` is running and reachable from the Jenkins controller'
    }
    Map err = answer.error ?: [:]
    String detail = "HTTP ${answer.status}" + (err.code ? " ${err.code}" : '') +
                    (err.where ? " at ${err.where}" : '') + (err.message ? ": ${err.message}" : '')
    switch (answer.status as int) {
        case 400:
            return "${prefix}: slurmfleet rejected it (${detail}). Fix the " +
                   (err.where ==~ /(json|job|pyxis|agent)\b.*/ ? 'json argument' : 'step arguments') + ' and run again'
        case 422:
            return "${prefix}: Slurm refused it (${detail}). Fix the json argument and run again"
        case 401:
            return "${prefix}: slurmfleet did not accept the API token from credential '${checked.credentialsId}' " +
                   "(${detail}). Store a token from the daemon's API token file (daemon.apiTokensFile) in that " +
                   'Secret Text credential'
        case 403:
            if (err.where == 'job') {
                return "${prefix}: cloud '${checked.cloud}' does not serve this job's folder (${detail})"
            }
            return "${prefix}: the API token from credential '${checked.credentialsId}' may not manage templates " +
                   "(${detail}). Use a token with templates (or admin) scope"
        case 404:
            return "${prefix}: not found (${detail}). Check that cloud '${checked.cloud}' is configured in " +
                   "slurmfleet (GET api/v1/clouds) and that ${where} is a slurmfleet daemon that serves api/v1/templates"
        case 503:
            if (err.where == 'jenkins.url') {
                return "${prefix}: the slurmfleet daemon at ${where} has no jenkins.url configured, so it does not " +
                       "provision agents (${detail}). An admin must set jenkins.url and jenkins.credentials in its " +
                       'configuration and restart it'
            }
            return "${prefix}: slurmfleet is not ready or cannot reach Slurm (${detail}). Try again later"
        default:
            return "${prefix}: slurmfleet answered ${detail}"
    }
}

// ---- TTL extension while the body runs ----------------------------------------------------
// A daemon thread named after the template; found again by name to stop it, so no state has to
// survive in CPS variables (a Thread is not serializable). After a controller restart the thread is
// gone: the daemon still keeps the template while its agents are busy, and the TTL still applies.
// The thread also stops by itself when the template is gone (404) or the build is no longer running
// (the Run it was handed says so: also after a hard kill, when the `finally` never runs).

@NonCPS
String sjtTouchThreadName(String name) {
    return 'slurmfleet-touch ' + name
}

// The TTL the daemon set (clamped, or its configured default), as the register answer's expiry
// minus now; the touch interval: the user's, which must be less than that TTL, or a third of it,
// at least 20 s (a third of the shortest TTL). [intervalSeconds:, ttlSeconds: (null: unknown)] or
// [problem:]. The expiry is on the daemon's clock, now on the controller's: an expiry that is not in
// the future (clocks far apart) tells nothing, and the interval is then the 20 s floor.
@NonCPS
Map sjtTouchPlan(Map checked, Long expiresAtUnix) {
    Long ttl = null
    if (expiresAtUnix != null) {
        long left = expiresAtUnix * 1000L - System.currentTimeMillis()
        if (left > 0) {
            ttl = (long) Math.ceil(left / 1000.0d)
        }
    }
    Long given = checked.touchIntervalSeconds
    if (given != null) {
        if (given > 0 && ttl != null && given >= ttl) {
            return [problem: "slurmJobTemplate: touchIntervalSeconds (${given}) must be less than the template's " +
                             "TTL, which the daemon set to ${ttl} s (" +
                             (checked.ttlSeconds != null ? "ttlSeconds ${checked.ttlSeconds}, clamped to 60 s - 7 days"
                                                         : 'its default jenkins.ephemeralTemplateTtlSeconds') +
                             '), or the template expires between two extensions; leave touchIntervalSeconds out ' +
                             'to extend it every third of its TTL']
        }
        return [intervalSeconds: given, ttlSeconds: ttl]
    }
    return [intervalSeconds: Math.max(20L, ttl == null ? 0L : ttl.intdiv(3)), ttlSeconds: ttl]
}

@NonCPS
String sjtDescribeTouch(Map touch) {
    String ttl = touch.ttlSeconds != null ? "TTL ${touch.ttlSeconds} s, " : ''
    if (touch.intervalSeconds <= 0) {
        return " (${ttl}not extended: touchIntervalSeconds is 0)"
    }
    if (!touch.started) {
        return " (${ttl}WARNING: not extended while the block runs: this build's Run (currentBuild.rawBuild) " +
               'cannot be read, so a thread could not tell when the build ends)'
    }
    return " (${ttl}extended every ${touch.intervalSeconds} s while the block runs)"
}

// Starts the touch thread; false when this build's Run cannot be read (then nothing is started:
// the thread could not see the build end and would extend the TTL for ever after a hard kill).
// Called on the CPS VM thread, so that sjtCurrentRun finds the Run.
@NonCPS
boolean sjtStartTouch(String base, String token, String name, Long intervalSeconds) {
    final def buildRun = sjtCurrentRun()
    if (buildRun == null) {
        return false
    }
    final long intervalMs = intervalSeconds * 1000L
    final String touchUrl = base + 'api/v1/templates/' + sjtEncode(name) + '/touch'
    Runnable loop = {
        try {
            while (!Thread.currentThread().isInterrupted()) {
                Thread.sleep(intervalMs)
                boolean running = true
                try {
                    running = buildRun.isBuilding()
                } catch (Exception ignored) {
                }
                if (!running) {
                    break
                }
                Map r = sjtHttp('POST', touchUrl, token, '{}')
                if (r.status == 404) {
                    break
                }
            }
        } catch (InterruptedException ignored) {
        }
    } as Runnable
    Thread t = new Thread(loop, sjtTouchThreadName(name))
    t.setDaemon(true)
    t.start()
    return true
}

@NonCPS
void sjtStopTouch(String name) {
    String wanted = sjtTouchThreadName(name)
    for (Thread t : Thread.getAllStackTraces().keySet()) {
        if (wanted.equals(t.getName())) {
            t.interrupt()
        }
    }
}
