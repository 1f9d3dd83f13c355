// Tests for the pipeline shared library in vars/ (slurmJobTemplate, slurmAgent).
// Plain Groovy 2.4 on Java 17, no Jenkins: the pipeline steps are stubbed, the slurmfleet daemon is a
// real HTTP server in this JVM that records every request. Run with tests/pipeline/run.sh.

import com.sun.net.httpserver.HttpExchange
import com.sun.net.httpserver.HttpHandler
import com.sun.net.httpserver.HttpServer
import groovy.json.JsonOutput
import org.codehaus.groovy.control.CompilerConfiguration
import org.codehaus.groovy.control.customizers.ImportCustomizer
import groovy.json.JsonSlurperClassic


// What the `error` step throws (hudson.AbortException in Jenkins).
class StepError extends RuntimeException {
    StepError(String m) { super(m) }
}

// Same simple names as the Jenkins classes the library recognises by name.
class CredentialNotFoundException extends RuntimeException {
    CredentialNotFoundException(String m) { super(m) }
}

class FlowInterruptedException extends RuntimeException {
    FlowInterruptedException() { super('aborted by user') }
}

// The fake daemon. Every request is recorded (method, path, headers, body) and appended to the
// shared timeline; `respond` decides the answer and can be replaced per test. An answer with
// `drop: true` closes the exchange without answering (for a client that gave up already).
class FakeDaemon {
    final HttpServer server
    final List<Map> requests = Collections.synchronizedList([])
    final List<String> timeline
    int registered = 0
    long defaultTtl = 3600   // jenkins.ephemeralTemplateTtlSeconds
    Closure respond = { Map req -> defaultAnswer(req) }

    FakeDaemon(List<String> timeline) {
        this.timeline = timeline
        server = HttpServer.create(new InetSocketAddress(InetAddress.getByName('127.0.0.1'), 0), 0)
        server.createContext('/', { HttpExchange ex -> handle(ex) } as HttpHandler)
        server.start()
    }

    String getUrl() { "http://127.0.0.1:${server.address.port}/" }

    void stop() { server.stop(0) }

    List<Map> requests(String method, String pathPrefix) {
        synchronized (requests) {
            return requests.findAll { it.method == method && it.path.startsWith(pathPrefix) }
        }
    }

    // As the daemon's TemplateJson: expires_at (ISO-8601 UTC) and expires_at_unix, now + the TTL,
    // which is ttlSeconds (or the configured default) clamped to 60 s - 7 days.
    Map expiry(Object ttlSeconds) {
        long ttl = Math.min(7L * 24 * 3600, Math.max(60L, ttlSeconds == null ? defaultTtl : ((Number) ttlSeconds).longValue()))
        long at = System.currentTimeMillis().intdiv(1000) + ttl
        return [expires_at     : java.time.Instant.ofEpochSecond(at).toString(),
                expires_at_unix: at]
    }

    Map defaultAnswer(Map req) {
        if (req.method == 'POST' && req.path == '/api/v1/templates') {
            registered++
            String name = 'eph-3f2a9c1' + registered
            Map doc = new groovy.json.JsonSlurperClassic().parseText(req.body)
            return [status: 201, body: JsonOutput.toJson([name: name, label: 'slurmfleet-' + name,
                                                          cloud: doc.cloud] + expiry(doc.ttlSeconds))]
        }
        if (req.method == 'POST' && req.path ==~ '/api/v1/templates/[^/]+/touch') {
            return [status: 200, body: JsonOutput.toJson(expiry(null))]
        }
        if (req.method == 'DELETE' && req.path.startsWith('/api/v1/templates/')) {
            return [status: 204]
        }
        def agent = req.path =~ '^/api/v1/agents/(hpc-(slurmfleet-)?(.*)-1772357400123-0)$'
        if (req.method == 'GET' && agent.matches()) {
            return [status: 200, body: JsonOutput.toJson([name: agent.group(1), cloud: 'hpc', template: agent.group(3),
                                                          phase: 'online', job_id: 413835, slurm_state: 'RUNNING'])]
        }
        return [status: 404, body: '{"error": {"code": "not_found", "message": "no such path", "where": ""}}']
    }

    private void handle(HttpExchange ex) {
        try {
            Map req = [method: ex.requestMethod, path: ex.requestURI.rawPath,
                       authorization: ex.requestHeaders.getFirst('Authorization'),
                       contentType: ex.requestHeaders.getFirst('Content-Type'),
                       body: ex.requestBody.getText('UTF-8')]
            requests << req
            timeline << "HTTP ${req.method} ${req.path}".toString()
            Map answer = respond(req)
            if (answer.drop) {
                return
            }
            (answer.headers ?: [:]).each { k, v -> ex.responseHeaders.add(k, v) }
            if (answer.body == null) {
                ex.sendResponseHeaders(answer.status, -1)
            } else {
                byte[] bytes = answer.body.getBytes('UTF-8')
                ex.responseHeaders.add('Content-Type', 'application/json')
                ex.sendResponseHeaders(answer.status, bytes.length)
                ex.responseBody.write(bytes)
            }
        } catch (Throwable t) {
            t.printStackTrace()
            ex.sendResponseHeaders(500, -1)
        } finally {
            ex.close()
        }
    }
}

// currentBuild. Like RunWrapper.getRawBuild (Run.fromExternalizableId), the lookup of the Run runs
// with the calling thread's authentication: the pipeline's (CPS VM) thread finds it, a thread of
// its own, anonymous on a secured controller, gets null.
class StubRunWrapper {
    final PipelineHarness h

    StubRunWrapper(PipelineHarness h) { this.h = h }

    def getRawBuild() {
        return h.runVisible && Thread.currentThread().is(h.pipelineThread) ? h.rawBuild : null
    }
}

// `env`: global variables plus what withEnv / withCredentials push for the length of a block.
class StubEnv {
    final List<Map> layers = []

    StubEnv(Map base) { layers << new LinkedHashMap(base) }

    def propertyMissing(String name) {
        for (int i = layers.size() - 1; i >= 0; i--) {
            if (layers[i].containsKey(name)) {
                return layers[i][name]
            }
        }
        return null
    }

    def propertyMissing(String name, value) { layers[-1][name] = value }

    void push(Map m) { layers << m }

    void pop() { layers.remove(layers.size() - 1) }
}

// Like CpsScript: a name that is not a variable is looked up among the environment variables,
// so `node(SLURM_LABEL)` and "${SLURM_LABEL}" work in the pipeline scripts under test.
class PipelineBinding extends Binding {
    final StubEnv stubEnv

    PipelineBinding(StubEnv e) { stubEnv = e }

    @Override
    Object getVariable(String name) {
        if (super.hasVariable(name)) {
            return super.getVariable(name)
        }
        def v = stubEnv.propertyMissing(name)
        if (v != null) {
            return v
        }
        throw new MissingPropertyException(name, getClass())
    }
}

// A vars/ script as Jenkins exposes it: name(...) runs its call method, name.method(...) any other
// (a closure passes the methods it lacks to its owner, the script).
class GlobalVariable extends Closure {
    GlobalVariable(Script s) { super(s) }

    Object doCall(Object[] args) { owner.invokeMethod('call', args) }
}

class PipelineHarness {
    static final String TOKEN = 'tok-9f8e7d6c5b4a39281706f5e4d3c2b1a0'
    static final File ROOT = new File(System.getProperty('pipeline.root', '.'))

    final List<String> timeline = Collections.synchronizedList([])
    final List<String> echoes = []
    final List<String> errors = []
    final List<String> nodes = []
    final Map<String, String> credentials = ['slurmfleet-api-token': TOKEN]
    final FakeDaemon daemon = new FakeDaemon(timeline)
    final StubEnv env
    final PipelineBinding binding
    final GroovyShell shell
    boolean building = true
    boolean runVisible = true                                      // false: rawBuild finds nothing
    final Expando rawBuild = new Expando(isBuilding: { -> building })  // the Run
    Thread pipelineThread

    PipelineHarness(Map extraEnv = [:]) {
        Map base = [SLURMFLEET_URL: daemon.url, JOB_NAME: 'team/gpu-tests', BUILD_NUMBER: '7']
        base.putAll(extraEnv)
        env = new StubEnv(base)
        binding = new PipelineBinding(env)
        def imports = new ImportCustomizer()
        imports.addImports('com.cloudbees.groovy.cps.NonCPS')
        def cc = new CompilerConfiguration()
        cc.addCompilationCustomizers(imports)
        shell = new GroovyShell(nonCpsLoader(), binding, cc)
        bindSteps()
        ['slurmJobTemplate', 'slurmAgent'].each { String name ->
            Script s = shell.parse(new File(ROOT, "vars/${name}.groovy"))
            s.binding = binding
            binding.setVariable(name, new GlobalVariable(s))
        }
    }

    // com.cloudbees.groovy.cps.NonCPS comes from Jenkins; the tests define a look-alike.
    private static GroovyClassLoader nonCpsLoader() {
        def gcl = new GroovyClassLoader(PipelineHarness.classLoader)
        gcl.parseClass('''package com.cloudbees.groovy.cps
import java.lang.annotation.*
@Retention(RetentionPolicy.RUNTIME) @Target(ElementType.METHOD) @interface NonCPS {}''')
        return gcl
    }

    private void bindSteps() {
        binding.setVariable('env', env)
        binding.setVariable('currentBuild', new StubRunWrapper(this))
        binding.setVariable('echo', { Object m -> echoes << m.toString(); timeline << 'echo'; null })
        binding.setVariable('error', { Object m -> errors << m.toString(); throw new StepError(m.toString()) })
        binding.setVariable('string', { Map m -> [type: 'string'] + m })
        binding.setVariable('withCredentials', { List bindings, Closure body ->
            Map vars = [:]
            bindings.each { Map b ->
                if (!credentials.containsKey(b.credentialsId)) {
                    throw new CredentialNotFoundException("Could not find credentials entry with ID '${b.credentialsId}'")
                }
                vars[b.variable] = credentials[b.credentialsId]
            }
            timeline << 'withCredentials'
            env.push(vars)
            try {
                return body()
            } finally {
                env.pop()
            }
        })
        binding.setVariable('withEnv', { List vars, Closure body ->
            Map m = [:]
            vars.each { String kv -> int i = kv.indexOf('='); m[kv.substring(0, i)] = kv.substring(i + 1) }
            timeline << 'withEnv'
            env.push(m)
            try {
                return body()
            } finally {
                env.pop()
            }
        })
        binding.setVariable('node', { String label, Closure body ->
            nodes << label
            timeline << "node ${label}".toString()
            env.push([NODE_NAME: agentName(label)])
            try {
                return body()
            } finally {
                env.pop()
            }
        })
        binding.setVariable('sh', { String cmd -> timeline << "sh ${cmd}".toString(); null })
        binding.setVariable('mark', { String what -> timeline << what; null })
    }

    // The node Jenkins would run a block for `label` on: an agent the daemon started for it.
    static String agentName(String label) {
        return 'hpc-' + label + '-1772357400123-0'
    }

    // Runs a pipeline script (scripted syntax) with the stubs and the library in scope.
    def run(String script) {
        pipelineThread = Thread.currentThread()
        return shell.evaluate(script)
    }

    // The script object of a vars/ file, to call its @NonCPS helpers directly.
    Script library(String name) {
        return (Script) ((Closure) binding.getVariable(name)).owner
    }

    // Runs the script and returns what it threw.
    Throwable runFailing(String script) {
        try {
            run(script)
        } catch (Throwable t) {
            return t
        }
        throw new AssertionError('the pipeline was expected to fail but did not')
    }

    int indexOf(String entry) {
        synchronized (timeline) { timeline.indexOf(entry) }
    }

    // Everything a user could read: echo lines, error() messages.
    String visibleOutput() {
        (echoes + errors).join('\n')
    }

    void close() {
        daemon.stop()
    }
}

// ---- the tests ----------------------------------------------------------------------------------


final String JSON = '''
{
  "job": {
    "partition": "gpu",
    "cpus_per_task": 8,
    "tres_per_job": "gres/gpu:1"
  }
}
'''

Map tests = [:]

// What the registration echo says of the TTL and the touch interval. The library reads the TTL as
// the daemon's expiry (whole seconds) less its own clock, so a second that begins between the
// answer and the reading makes it one second shorter (a slow run, e.g. under ASan, does that):
// both readings are accepted, each with the interval the library derives from it.
def touchTexts(long ttl, String tail = null) {
    return [ttl, ttl - 1].collect { long t ->
        "(TTL ${t} s, " + (tail ?: "extended every ${Math.max(20L, t.intdiv(3))} s while the block runs)")
    }.collect { it.toString() }
}

boolean echoedTouch(PipelineHarness h, long ttl, String tail = null) {
    return h.echoes.any { String e -> touchTexts(ttl, tail).any { e.endsWith(it) } }
}

def assertNoToken(PipelineHarness h, Throwable t = null) {
    assert !h.visibleOutput().contains(PipelineHarness.TOKEN)
    for (Throwable c = t; c != null; c = c.cause) {
        assert !String.valueOf(c.message).contains(PipelineHarness.TOKEN)
    }
}

def noTouchThreadLeft() {
    long deadline = System.currentTimeMillis() + 2000
    while (System.currentTimeMillis() < deadline) {
        if (!Thread.getAllStackTraces().keySet().any { it.name.startsWith('slurmfleet-touch ') && it.alive }) {
            return true
        }
        Thread.sleep(20)
    }
    return false
}

tests['registers, runs the body with SLURM_LABEL, then releases'] = { PipelineHarness h ->
    h.binding.setVariable('seen', [:])
    def result = h.run("""
        slurmJobTemplate(cloud: 'my-cluster', json: '''${JSON}''') {
            node(SLURM_LABEL) {
                seen.bare = SLURM_LABEL
                seen.env = env.SLURM_LABEL
                seen.gstring = "\${SLURM_LABEL}".toString()
                seen.template = env.SLURM_TEMPLATE
                seen.tokenInBody = env.SLURMFLEET_API_TOKEN
                sh 'nvidia-smi'
                'body result'
            }
        }
    """)
    Map seen = h.binding.getVariable('seen')
    assert seen.bare == 'slurmfleet-eph-3f2a9c11'
    assert seen.env == 'slurmfleet-eph-3f2a9c11'
    assert seen.gstring == 'slurmfleet-eph-3f2a9c11'
    assert seen.template == 'eph-3f2a9c11'
    assert seen.tokenInBody == null          // the body never runs inside withCredentials
    assert h.nodes == ['slurmfleet-eph-3f2a9c11']
    assert result == 'body result'

    int reg = h.indexOf('HTTP POST /api/v1/templates')
    int node = h.indexOf('node slurmfleet-eph-3f2a9c11')
    int del = h.indexOf('HTTP DELETE /api/v1/templates/eph-3f2a9c11')
    assert reg >= 0 && node > reg && del > node
    assert h.daemon.requests.size() == 2

    Map post = h.daemon.requests[0]
    assert post.authorization == "Bearer ${PipelineHarness.TOKEN}".toString()
    assert post.contentType == 'application/json'
    Map sent = new JsonSlurperClassic().parseText(post.body)
    assert sent.keySet() == ['cloud', 'json', 'owner', 'job'] as Set  // no ttlSeconds: the daemon's default
    assert sent.cloud == 'my-cluster'
    assert sent.json == JSON                  // the text exactly as written, as a JSON string
    assert sent.owner == 'team/gpu-tests #7'
    assert sent.job == 'team/gpu-tests'
    assert h.daemon.requests[1].authorization == "Bearer ${PipelineHarness.TOKEN}".toString()
    assert h.env.SLURM_LABEL == null          // withEnv ended with the block
    assert h.echoes.any { it.contains('registered template eph-3f2a9c11') && it.contains('slurmfleet-eph-3f2a9c11') }
    assert echoedTouch(h, 3600)
    assert h.echoes.any { it.contains('released template eph-3f2a9c11') }
    assertNoToken(h)
}

tests['the body fails: released, and the same exception propagates'] = { PipelineHarness h ->
    def boom = new IllegalStateException('make failed')
    h.binding.setVariable('boom', boom)
    Throwable t = h.runFailing("""
        slurmJobTemplate(cloud: 'c', json: '{"job": {"partition": "debug"}}') {
            node(SLURM_LABEL) { mark 'body'; throw boom }
        }
    """)
    assert t.is(boom)
    assert h.indexOf('body') < h.indexOf('HTTP DELETE /api/v1/templates/eph-3f2a9c11')
    assert h.daemon.requests('DELETE', '/api/v1/templates/').size() == 1
    assert h.errors.isEmpty()
    assertNoToken(h, t)
}

tests['the build is aborted in the body: released, the abort propagates'] = { PipelineHarness h ->
    Throwable t = h.runFailing("""
        slurmJobTemplate(cloud: 'c', json: '{"job": {}}') {
            node(SLURM_LABEL) { throw new FlowInterruptedException() }
        }
    """)
    assert t instanceof FlowInterruptedException
    assert h.daemon.requests('DELETE', '/api/v1/templates/eph-3f2a9c11').size() == 1
}

tests['400 from the daemon: clear error with where and message, nothing to release'] = { PipelineHarness h ->
    h.daemon.respond = { Map req ->
        [status: 400, body: '{"error": {"code": "invalid_input", "message": "must be a positive integer", ' +
                            '"where": "json.job.cpus_per_task"}}']
    }
    h.binding.setVariable('ran', false)
    Throwable t = h.runFailing("""
        slurmJobTemplate(cloud: 'c', json: '{"job": {"cpus_per_task": -1}}') { ran = true }
    """)
    assert t instanceof StepError
    assert t.message.contains('HTTP 400')
    assert t.message.contains('json.job.cpus_per_task')
    assert t.message.contains('must be a positive integer')
    assert t.message.contains('invalid_input')
    assert t.message.contains('Fix the json argument')
    assert !h.binding.getVariable('ran')
    assert h.daemon.requests('DELETE', '/').isEmpty()
    assertNoToken(h, t)
}

tests['401 and 403 name the credential and the fix'] = { PipelineHarness h ->
    h.daemon.respond = { Map req -> [status: 401, body: '{"error": {"code": "unauthenticated", "message": "unknown token", "where": ""}}'] }
    Throwable t = h.runFailing("slurmJobTemplate(cloud: 'c', json: '{}') { }")
    assert t.message.contains("credential 'slurmfleet-api-token'") && t.message.contains('HTTP 401')
    assertNoToken(h, t)
    h.daemon.respond = { Map req -> [status: 403, body: '{"error": {"code": "forbidden", "message": "token \'jenkins\' has scope read; this endpoint needs templates or admin", "where": ""}}'] }
    t = h.runFailing("slurmJobTemplate(cloud: 'c', json: '{}') { }")
    assert t.message.contains('Use a token with templates (or admin) scope') && t.message.contains('HTTP 403')
    assertNoToken(h, t)
}

tests['a cloud restricted to other folders: the error says so, not "use a templates token"'] = { PipelineHarness h ->
    h.daemon.respond = { Map req ->
        [status: 403, body: '{"error": {"code": "forbidden", "message": "cloud hpc serves only jobs in the folders ' +
                            'ml; team/gpu-tests is in folder team. Use a cloud that serves it, or add the folder to ' +
                            'authorizedFolders of hpc", "where": "job"}}']
    }
    Throwable t = h.runFailing("slurmJobTemplate(cloud: 'hpc', json: '{}') { }")
    assert t.message.startsWith("slurmJobTemplate: could not register the template: cloud 'hpc' does not serve " +
                                "this job's folder (HTTP 403 forbidden at job: cloud hpc serves only jobs in the folders ml")
    assert !t.message.contains('(or admin) scope')
}

tests['without JOB_NAME no job is sent'] = { PipelineHarness h ->
    h.env.layers[0].remove('JOB_NAME')
    h.run("slurmJobTemplate(cloud: 'c', json: '{}') { }")
    Map sent = new JsonSlurperClassic().parseText(h.daemon.requests[0].body)
    assert !sent.containsKey('job')
    assert sent.owner == 'unknown job #7'
}

tests['422 (Slurm refused the template) points at the json argument'] = { PipelineHarness h ->
    h.daemon.respond = { Map req -> [status: 422, body: '{"error": {"code": "rejected", "message": "Invalid partition name specified", "where": "job.partition"}}'] }
    Throwable t = h.runFailing("slurmJobTemplate(cloud: 'c', json: '{\"job\": {\"partition\": \"nope\"}}') { }")
    assert t.message.contains('HTTP 422 rejected at job.partition: Invalid partition name specified')
    assert t.message.contains('Fix the json argument')
}

tests['404 on register names the cloud'] = { PipelineHarness h ->
    h.daemon.respond = { Map req -> [status: 404, body: '{"error": {"code": "not_found", "message": "no cloud \\"nope\\"", "where": "cloud"}}'] }
    Throwable t = h.runFailing("slurmJobTemplate(cloud: 'nope', json: '{}') { }")
    assert t.message.contains("cloud 'nope'") && t.message.contains('HTTP 404')
}

tests['404 on release is success (already gone)'] = { PipelineHarness h ->
    h.daemon.respond = { Map req ->
        req.method == 'DELETE' ? [status: 404, body: '{"error": {"code": "not_found", "message": "no template", "where": ""}}']
                               : h.daemon.defaultAnswer(req)
    }
    def r = h.run("slurmJobTemplate(cloud: 'c', json: '{}') { 42 }")
    assert r == 42
    assert h.echoes.any { it.contains('released template eph-3f2a9c11') }
    assert !h.echoes.any { it.contains('WARNING') }
}

tests['a failed release warns, keeps the build result and leaves the rest to the TTL'] = { PipelineHarness h ->
    h.daemon.respond = { Map req ->
        req.method == 'DELETE' ? [status: 500, body: '{"error": {"code": "internal", "message": "disk full", "where": ""}}']
                               : h.daemon.defaultAnswer(req)
    }
    def r = h.run("slurmJobTemplate(cloud: 'c', json: '{}') { 'ok' }")
    assert r == 'ok'
    assert h.echoes.any { it.contains('WARNING') && it.contains('eph-3f2a9c11') && it.contains('HTTP 500') && it.contains('TTL') }
    assertNoToken(h)
}

tests['a body failure is not hidden by a failed release'] = { PipelineHarness h ->
    h.daemon.respond = { Map req -> req.method == 'DELETE' ? [status: 500, body: 'oops'] : h.daemon.defaultAnswer(req) }
    Throwable t = h.runFailing("slurmJobTemplate(cloud: 'c', json: '{}') { throw new RuntimeException('tests failed') }")
    assert t.message == 'tests failed'
    assert h.echoes.any { it.contains('WARNING') }
}

tests['argument errors are clear and come before any request'] = { PipelineHarness h ->
    Map cases = [
        "slurmJobTemplate(json: '{}') { }"                          : 'missing the cloud argument',
        "slurmJobTemplate(cloud: '', json: '{}') { }"               : 'missing the cloud argument',
        "slurmJobTemplate(cloud: 'c') { }"                          : 'missing the json argument',
        "slurmJobTemplate(cloud: 'c', json: '{\"job\": ') { }"      : 'not valid JSON',
        "slurmJobTemplate(cloud: 'c', json: '[1]') { }"             : 'must be a JSON object',
        "slurmJobTemplate(cloud: 'c', json: '{}', ttl: 5) { }"      : "unknown argument 'ttl'",
        "slurmJobTemplate(cloud: 'c', json: '{}', ttlSeconds: 0) { }" : 'ttlSeconds must be a positive',
        "slurmJobTemplate(cloud: 'c', json: '{}', ttlSeconds: 'x') { }" : 'ttlSeconds must be a positive',
        "slurmJobTemplate(cloud: 'c', json: '{}', touchIntervalSeconds: -1) { }" : 'touchIntervalSeconds must be a whole number',
        "slurmJobTemplate(cloud: 'c', json: '{}')"                  : 'missing the body block',
        "slurmJobTemplate(cloud: 'c', json: '{}', daemonUrl: 'slurmfleet:8470') { }" : 'must be an http:// or https:// URL',
    ]
    cases.each { String script, String expected ->
        Throwable t = h.runFailing(script)
        assert t instanceof StepError : "${script}: ${t}"
        assert t.message.contains(expected) : "${script}: ${t.message}"
        assert t.message.startsWith('slurmJobTemplate: ')
    }
    assert h.daemon.requests.isEmpty()
}

tests['SLURMFLEET_URL unset: the error says where to set it'] = { PipelineHarness h ->
    h.env.layers[0].remove('SLURMFLEET_URL')
    Throwable t = h.runFailing("slurmJobTemplate(cloud: 'c', json: '{}') { }")
    assert t.message.contains('SLURMFLEET_URL is not set')
    assert t.message.contains('Manage Jenkins')
    assert t.message.contains('daemonUrl')
    assert h.daemon.requests.isEmpty()
}

tests['daemonUrl, ttlSeconds and credentialsId arguments are used (URL without trailing slash)'] = { PipelineHarness h ->
    h.env.layers[0].remove('SLURMFLEET_URL')
    h.credentials['other-token'] = 'other-secret-token-000000'
    String url = h.daemon.url[0..-2]
    h.run("slurmJobTemplate(cloud: 'c', json: [job: [partition: 'debug']], ttlSeconds: 600, daemonUrl: '${url}', credentialsId: 'other-token') { }")
    Map post = h.daemon.requests[0]
    assert post.path == '/api/v1/templates'
    assert post.authorization == 'Bearer other-secret-token-000000'
    Map sent = new JsonSlurperClassic().parseText(post.body)
    assert sent.ttlSeconds == 600
    assert new JsonSlurperClassic().parseText(sent.json) == [job: [partition: 'debug']]
    assert h.daemon.requests[1].method == 'DELETE'
    assert !h.visibleOutput().contains('other-secret-token-000000')
}

tests['a missing credential names the credential ID and the fix'] = { PipelineHarness h ->
    Throwable t = h.runFailing("slurmJobTemplate(cloud: 'c', json: '{}', credentialsId: 'nope') { }")
    assert t instanceof StepError
    assert t.message.contains("no credential 'nope'") && t.message.contains('Secret Text')
    assert h.daemon.requests.isEmpty()
}

tests['daemon unreachable: the error names the URL, never the token'] = { PipelineHarness h ->
    int port = h.daemon.server.address.port
    h.daemon.stop()
    Throwable t = h.runFailing("slurmJobTemplate(cloud: 'c', json: '{}') { }")
    assert t.message.contains("cannot reach slurmfleet at http://127.0.0.1:${port}/")
    assert t.message.contains('slurmfleet serve')
    assertNoToken(h, t)
}

tests['credentials in the URL are not shown'] = { PipelineHarness h ->
    h.daemon.respond = { Map req -> [status: 503, body: '{"error": {"code": "unavailable", "message": "slurmrestd down", "where": ""}}'] }
    String url = h.daemon.url.replace('http://', 'http://admin:hunter2@')
    Throwable t = h.runFailing("slurmJobTemplate(cloud: 'c', json: '{}', daemonUrl: '${url}') { }")
    assert t.message.contains('HTTP 503') && t.message.contains('Try again later')
    assert !t.message.contains('hunter2')
    // a password holding '/', and one in a URL without its scheme
    url = h.daemon.url.replace('http://', 'http://admin:2024/hunter2@')
    t = h.runFailing("slurmJobTemplate(cloud: 'c', json: '{}', daemonUrl: '${url}') { }")
    assert !t.message.contains('hunter2')
    t = h.runFailing("slurmJobTemplate(cloud: 'c', json: '{}', daemonUrl: 'admin:hunter2@slurmfleet:8470') { }")
    assert t.message.contains('must be an http:// or https:// URL') && !t.message.contains('hunter2')
}

tests['503 on register is retried'] = { PipelineHarness h ->
    int calls = 0
    h.daemon.respond = { Map req ->
        if (req.method == 'POST' && req.path == '/api/v1/templates' && calls++ == 0) {
            return [status: 503, headers: ['Retry-After': '1'], body: '{"error": {"code": "not_ready", "message": "starting", "where": ""}}']
        }
        h.daemon.defaultAnswer(req)
    }
    assert h.run("slurmJobTemplate(cloud: 'c', json: '{}') { env.SLURM_LABEL }") == 'slurmfleet-eph-3f2a9c11'
    assert h.daemon.requests('POST', '/api/v1/templates').size() == 2
}

tests['provisioning off (503 at jenkins.url): fails at once and says the daemon has no jenkins.url'] = { PipelineHarness h ->
    // Service::NotProvisioning (src/fleet/service.cc), as the API sends it.
    h.daemon.respond = { Map req ->
        [status: 503, headers: ['Retry-After': '1'],
         body: '{"error": {"code": "unavailable", "message": "agent provisioning is off: set jenkins.url and ' +
               'jenkins.credentials in the configuration", "where": "jenkins.url"}}']
    }
    Throwable t = h.runFailing("slurmJobTemplate(cloud: 'c', json: '{}') { }")
    assert t instanceof StepError
    assert h.daemon.requests('POST', '/api/v1/templates').size() == 1   // no retry can change it
    assert t.message.startsWith("slurmJobTemplate: could not register the template: the slurmfleet daemon at " +
                                "${h.daemon.url} has no jenkins.url configured, so it does not provision agents " +
                                '(HTTP 503 unavailable at jenkins.url: agent provisioning is off')
    assert t.message.endsWith('An admin must set jenkins.url and jenkins.credentials in its configuration and restart it')
    assert !t.message.contains('Try again later')
    assertNoToken(h, t)
}

tests['HTTP limits: 5 s to connect, 10 s to answer, one call with its retries within 30 s'] = { PipelineHarness h ->
    Script lib = h.library('slurmJobTemplate')
    assert lib.sjtLimits() == [connectMs: 5000L, readMs: 10000L, callBudgetMs: 30000L, maxWaitMs: 10000L]
    String unavailable = '{"error": {"code": "unavailable", "message": "slurmrestd down", "where": ""}}'
    Map busy = [status: 503, body: unavailable, retryAfter: '10']
    assert lib.sjtRetryWait(busy, 1, 0L) == 10000L
    assert lib.sjtRetryWait(busy, 1, 5000L) == 10000L    // 5 + 10 s wait + 15 s request = 30 s
    assert lib.sjtRetryWait(busy, 1, 5001L) == -1L       // the next request could end after 30 s
    assert lib.sjtRetryWait(busy, 2, 10050L) == -1L
    assert lib.sjtRetryWait([status: 503, body: unavailable, retryAfter: '3600'], 1, 0L) == 10000L
    assert lib.sjtRetryWait([status: 503, body: unavailable], 1, 40L) == 1000L
    assert lib.sjtRetryWait([status: 503, body: unavailable], 2, 1100L) == 2000L
    assert lib.sjtRetryWait([status: 503, body: unavailable], 3, 3200L) == -1L   // three attempts in all
    assert lib.sjtRetryWait([transport: 'ConnectException: Connection refused'], 1, 3L) == 1000L
    assert lib.sjtRetryWait([transport: 'SocketTimeoutException: Read timed out'], 1, 10000L) == -1L
    assert lib.sjtRetryWait([status: 503, body: '{"error": {"code": "unavailable", "message": "off", ' +
                                                '"where": "jenkins.url"}}'], 1, 5L) == -1L
    assert lib.sjtRetryWait([status: 500, body: ''], 1, 5L) == -1L
}

tests['a daemon that does not answer: register gives up after the 10 s read timeout'] = { PipelineHarness h ->
    def release = new java.util.concurrent.CountDownLatch(1)
    h.daemon.respond = { Map req ->
        release.await(25, java.util.concurrent.TimeUnit.SECONDS)
        [drop: true]
    }
    long start = System.currentTimeMillis()
    Throwable t
    try {
        t = h.runFailing("slurmJobTemplate(cloud: 'c', json: '{}') { }")
    } finally {
        release.countDown()
    }
    long took = System.currentTimeMillis() - start
    assert t instanceof StepError && t.message.contains('Read timed out')
    // a lower bound only: a loaded machine may take longer, never shorter (the limit itself is
    // checked in 'HTTP limits'); the daemon would have answered (dropped) only after 25 s
    assert took >= 9500 : "took ${took} ms"
    assert h.daemon.requests.size() == 1                  // a timeout is not retried
    assertNoToken(h, t)
}

tests['without ttlSeconds none is sent: the daemon\'s default TTL applies and sets the touch interval'] = { PipelineHarness h ->
    h.daemon.defaultTtl = 600
    h.run("slurmJobTemplate(cloud: 'c', json: '{}') { }")
    assert !new JsonSlurperClassic().parseText(h.daemon.requests[0].body).containsKey('ttlSeconds')
    assert h.echoes.any { it.contains('registered template eph-3f2a9c11') }
    assert echoedTouch(h, 600)
}

tests['the touch interval is a third of the TTL the daemon clamped to, at least 20 s'] = { PipelineHarness h ->
    h.run("slurmJobTemplate(cloud: 'c', json: '{}', ttlSeconds: 30) { }")   // clamped up to 60 s
    assert new JsonSlurperClassic().parseText(h.daemon.requests[0].body).ttlSeconds == 30
    assert echoedTouch(h, 60)
    h.run("slurmJobTemplate(cloud: 'c', json: '{}', ttlSeconds: 864000) { }")   // 10 days: clamped to 7
    assert echoedTouch(h, 604800)
    h.run("slurmJobTemplate(cloud: 'c', json: '{}', touchIntervalSeconds: 0) { }")
    assert echoedTouch(h, 3600, 'not extended: touchIntervalSeconds is 0)')
    // An expiry that is not in the future (clocks apart) tells nothing: the 20 s floor.
    h.daemon.respond = { Map req ->
        req.path == '/api/v1/templates'
            ? [status: 201, body: '{"name": "eph-0", "label": "slurmfleet-eph-0", "cloud": "c", ' +
                                  '"expires_at": "2020-01-01T00:00:00Z", "expires_at_unix": 1577836800}']
            : h.daemon.defaultAnswer(req)
    }
    h.run("slurmJobTemplate(cloud: 'c', json: '{}') { }")
    assert h.echoes.any { it.contains('registered template eph-0') && it.endsWith('(extended every 20 s while the block runs)') }
}

tests['a touchIntervalSeconds not below the TTL fails at once, naming the argument'] = { PipelineHarness h ->
    Throwable t = h.runFailing("slurmJobTemplate(cloud: 'c', json: '{}', ttlSeconds: 120, touchIntervalSeconds: 120) { }")
    assert t instanceof StepError
    assert t.message.startsWith('slurmJobTemplate: touchIntervalSeconds (120) must be less than ttlSeconds (120)')
    assert h.daemon.requests.isEmpty()

    // Against the TTL the daemon set: its default, or the clamped ttlSeconds. Registered, then released.
    h.daemon.defaultTtl = 600
    h.binding.setVariable('ran', false)
    t = h.runFailing("slurmJobTemplate(cloud: 'c', json: '{}', touchIntervalSeconds: 900) { ran = true }")
    assert t instanceof StepError
    // 599 when a second began between the daemon's answer and the library's reading (touchTexts)
    assert t.message.startsWith("slurmJobTemplate: touchIntervalSeconds (900) must be less than the template's TTL, " +
                                'which the daemon set to 600 s (its default jenkins.ephemeralTemplateTtlSeconds)') ||
           t.message.startsWith("slurmJobTemplate: touchIntervalSeconds (900) must be less than the template's TTL, " +
                                'which the daemon set to 599 s (its default jenkins.ephemeralTemplateTtlSeconds)')
    assert !h.binding.getVariable('ran')
    assert h.daemon.requests('DELETE', '/api/v1/templates/eph-3f2a9c11').size() == 1
    assert h.echoes.any { it.contains('released template eph-3f2a9c11') }

    t = h.runFailing("slurmJobTemplate(cloud: 'c', json: '{}', ttlSeconds: 864000, touchIntervalSeconds: 700000) { }")
    assert ['604800', '604799'].any {
        t.message.startsWith("slurmJobTemplate: touchIntervalSeconds (700000) must be less than the template's " +
                             "TTL, which the daemon set to ${it} s (ttlSeconds 864000, clamped to 60 s - 7 days)")
    }
    assert h.daemon.requests('DELETE', '/api/v1/templates/eph-3f2a9c12').size() == 1
}

tests['the TTL is extended while the body runs, and no longer after'] = { PipelineHarness h ->
    h.run("""
        slurmJobTemplate(cloud: 'c', json: '{}', ttlSeconds: 3, touchIntervalSeconds: 1) {
            Thread.sleep(2600)
        }
    """)
    List touches = h.daemon.requests('POST', '/api/v1/templates/eph-3f2a9c11/touch')
    assert touches.size() >= 1
    assert touches.every { it.authorization == "Bearer ${PipelineHarness.TOKEN}".toString() }
    assert noTouchThreadLeft()
    int after = touches.size()
    Thread.sleep(1300)
    assert h.daemon.requests('POST', '/api/v1/templates/eph-3f2a9c11/touch').size() == after
}

tests['the TTL extension stops by itself when the build is over'] = { PipelineHarness h ->
    h.daemon.respond = { Map req ->
        if (req.path.endsWith('/touch')) { h.building = false }
        h.daemon.defaultAnswer(req)
    }
    // As after a hard kill, where the `finally` that stops the thread never runs: the thread sees
    // the Run it was handed end, by itself (the stub's rawBuild finds nothing from its thread).
    h.binding.setVariable('touchThreads', { ->
        Thread.getAllStackTraces().keySet().count { it.name.startsWith('slurmfleet-touch ') && it.alive }
    })
    h.binding.setVariable('left', -1)
    h.run("slurmJobTemplate(cloud: 'c', json: '{}', touchIntervalSeconds: 1) { Thread.sleep(3500); left = touchThreads() }")
    assert h.daemon.requests('POST', '/api/v1/templates/eph-3f2a9c11/touch').size() == 1
    assert h.binding.getVariable('left') == 0
}

tests['no Run to watch: no TTL extension thread, and the log says so'] = { PipelineHarness h ->
    h.runVisible = false
    h.run("slurmJobTemplate(cloud: 'c', json: '{}', touchIntervalSeconds: 1) { Thread.sleep(1500) }")
    assert h.daemon.requests('POST', '/api/v1/templates/eph-3f2a9c11/touch').isEmpty()
    assert h.echoes.any { it.contains('registered template eph-3f2a9c11') &&
                          it.contains('WARNING: not extended while the block runs') }
    assert h.daemon.requests('DELETE', '/api/v1/templates/eph-3f2a9c11').size() == 1
}

tests['nested templates get their own labels'] = { PipelineHarness h ->
    h.binding.setVariable('labels', [])
    h.run("""
        slurmJobTemplate(cloud: 'cpu', json: '{}') {
            slurmJobTemplate(cloud: 'gpu', json: '{}') {
                labels << env.SLURM_LABEL
            }
            labels << env.SLURM_LABEL
        }
    """)
    assert h.binding.getVariable('labels') == ['slurmfleet-eph-3f2a9c12', 'slurmfleet-eph-3f2a9c11']
    assert h.daemon.requests('DELETE', '/').collect { it.path } ==
           ['/api/v1/templates/eph-3f2a9c12', '/api/v1/templates/eph-3f2a9c11']
}

tests['slurmAgent: template + node(SLURM_LABEL) in one call'] = { PipelineHarness h ->
    def r = h.run("""
        slurmAgent(cloud: 'my-cluster', json: '{"job": {"partition": "gpu"}}', ttlSeconds: 900) {
            sh 'python train.py'
            env.SLURM_TEMPLATE
        }
    """)
    assert r == 'eph-3f2a9c11'
    assert h.nodes == ['slurmfleet-eph-3f2a9c11']
    int reg = h.indexOf('HTTP POST /api/v1/templates')
    int node = h.indexOf('node slurmfleet-eph-3f2a9c11')
    int sh = h.indexOf('sh python train.py')
    int del = h.indexOf('HTTP DELETE /api/v1/templates/eph-3f2a9c11')
    assert reg >= 0 && node > reg && sh > node && del > sh
    assert new JsonSlurperClassic().parseText(h.daemon.requests[0].body).ttlSeconds == 900
}

tests['slurmAgent: failures release and propagate; argument errors name slurmAgent'] = { PipelineHarness h ->
    Throwable t = h.runFailing("slurmAgent(cloud: 'c', json: '{}') { error 'pytest failed' }")
    assert t instanceof StepError && t.message == 'pytest failed'
    assert h.daemon.requests('DELETE', '/api/v1/templates/eph-3f2a9c11').size() == 1
    t = h.runFailing("slurmAgent(cloud: 'c', json: '{}')")
    assert t instanceof StepError && t.message.startsWith('slurmAgent: missing the body block')
}

tests['slurmAgent: the console says which Slurm job the block runs in, before the block'] = { PipelineHarness h ->
    h.run("slurmAgent(cloud: 'hpc', json: '{}') { sh 'make test' }")
    String agent = 'hpc-slurmfleet-eph-3f2a9c11-1772357400123-0'
    List gets = h.daemon.requests('GET', '/api/v1/agents/')
    assert gets.collect { it.path } == ["/api/v1/agents/${agent}".toString()]
    assert gets[0].authorization == "Bearer ${PipelineHarness.TOKEN}".toString()
    assert h.echoes.contains("Submitted Slurm job 413835 for agent ${agent} (cloud 'hpc', template eph-3f2a9c11)".toString())
    assert h.indexOf("HTTP GET /api/v1/agents/${agent}".toString()) < h.indexOf('sh make test')
    assertNoToken(h)
}

tests['slurmAgent: no Slurm job line is no reason to fail the build'] = { PipelineHarness h ->
    h.daemon.respond = { Map req ->
        req.method == 'GET' ? [status: 404, body: '{"error": {"code": "not_found", "message": "no agent", "where": ""}}']
                            : h.daemon.defaultAnswer(req)
    }
    assert h.run("slurmAgent(cloud: 'hpc', json: '{}') { 'built' }") == 'built'
    assert h.echoes.any { it.contains('cannot show the Slurm job of hpc-slurmfleet-eph-3f2a9c11') && it.contains('not a slurmfleet agent') }

    h.daemon.respond = { Map req ->
        req.method == 'GET' ? [status: 500, body: '{"error": {"code": "internal", "message": "store locked", "where": ""}}']
                            : h.daemon.defaultAnswer(req)
    }
    assert h.run("slurmAgent(cloud: 'hpc', json: '{}') { 'built' }") == 'built'
    assert h.echoes.any { it.contains('HTTP 500: store locked') }
    assert h.errors.isEmpty()
    assertNoToken(h)
}

tests['printSlurmJob: inside the user\'s own node block, and outside any'] = { PipelineHarness h ->
    h.run("""
        slurmJobTemplate(cloud: 'hpc', json: '{}') {
            slurmJobTemplate.printSlurmJob()
            node(SLURM_LABEL) {
                assert slurmJobTemplate.printSlurmJob() == 413835
            }
        }
    """)
    assert h.echoes.any { it.contains('not inside a node block') }
    assert h.echoes.count { it.startsWith('Submitted Slurm job 413835 for agent ') } == 1
    assert h.daemon.requests('GET', '/').size() == 1
}

tests['the plugin\'s declarative properties set the inline template\'s keys'] = { PipelineHarness h ->
    h.run("""
        slurmAgent(cloud: 'my-cluster', partition: 'compute', workingDir: '/tmp/jenkins',
                   javaPath: '/opt/jenkins/jdk-17/bin/java', jarPath: '/opt/jenkins/agent.jar',
                   setupScript: 'module load java/21') { sh 'true' }
    """)
    Map sent = new JsonSlurperClassic().parseText(h.daemon.requests('POST', '/api/v1/templates')[0].body)
    assert new JsonSlurperClassic().parseText(sent.json) ==
           [job  : [partition: 'compute', current_working_directory: '/tmp/jenkins'],
            agent: [java_path: '/opt/jenkins/jdk-17/bin/java', jar_path: '/opt/jenkins/agent.jar',
                    setup_script: 'module load java/21']]

    h.run("""
        slurmJobTemplate(cloud: 'c', json: '{"job": {"cpus_per_task": 4, "partition": "gpu"}}', partition: 'gpu',
                         downloadJar: true) { }
    """)
    sent = new JsonSlurperClassic().parseText(h.daemon.requests('POST', '/api/v1/templates')[1].body)
    assert new JsonSlurperClassic().parseText(sent.json) ==
           [job: [cpus_per_task: 4, partition: 'gpu'], agent: [download_jar: true]]
}

tests['property errors name the property and the fix, before any request'] = { PipelineHarness h ->
    Map cases = [
        "slurmAgent(cloud: 'c', json: '{\"job\": {\"partition\": \"gpu\"}}', partition: 'cpu') { }":
            "partition 'cpu' contradicts json job.partition 'gpu'; give it in one place only",
        "slurmAgent(cloud: 'c', partition: '') { }"           : "partition must be a non-empty string, e.g. partition: 'compute'",
        "slurmAgent(cloud: 'c', workingDir: 7) { }"           : "workingDir must be a non-empty string, e.g. workingDir: '/tmp/jenkins'",
        "slurmAgent(cloud: 'c', downloadJar: 'yes') { }"      : "downloadJar must be true or false, not 'yes'",
        "slurmAgent(cloud: 'c', json: '{\"agent\": 1}', javaPath: 'java') { }":
            'json argument\'s "agent" must be an object',
        "slurmAgent(cloud: 'c', partitions: 'gpu') { }"       : "unknown argument 'partitions'",
    ]
    cases.each { String script, String expected ->
        Throwable t = h.runFailing(script)
        assert t instanceof StepError : "${script}: ${t}"
        assert t.message.contains(expected) : "${script}: ${t.message}"
    }
    assert h.daemon.requests.isEmpty()
}

tests['the declarative pattern from docs/pipelines.md runs'] = { PipelineHarness h ->
    // Declarative's own keywords, stubbed just enough to run the block structure.
    ['pipeline', 'stages', 'steps', 'script', 'post', 'always'].each { String kw ->
        h.binding.setVariable(kw, { Closure c -> c() })
    }
    h.binding.setVariable('stage', { String n, Closure c -> h.timeline << "stage ${n}".toString(); c() })
    h.binding.setVariable('agent', { Object a -> null })
    h.binding.setVariable('none', null)
    h.binding.setVariable('checkout', { Object a -> h.timeline << 'checkout'; null })
    h.binding.setVariable('scm', 'scm')
    String doc = new File(PipelineHarness.ROOT, 'docs/pipelines.md').getText('UTF-8')
    def m = doc =~ /(?s)<!-- test:declarative -->\s*```groovy\n(.*?)```/
    assert m.find() : 'docs/pipelines.md lost its <!-- test:declarative --> example'
    h.run(m.group(1))
    assert h.nodes == ['slurmfleet-eph-3f2a9c11']
    assert h.indexOf('checkout') > h.indexOf('node slurmfleet-eph-3f2a9c11')
    assert h.daemon.requests('DELETE', '/api/v1/templates/eph-3f2a9c11').size() == 1
}

tests['the scripted example from docs/pipelines.md runs'] = { PipelineHarness h ->
    String doc = new File(PipelineHarness.ROOT, 'docs/pipelines.md').getText('UTF-8')
    def m = doc =~ /(?s)<!-- test:scripted -->\s*```groovy\n(.*?)```/
    assert m.find() : 'docs/pipelines.md lost its <!-- test:scripted --> example'
    h.run(m.group(1))
    assert h.nodes == ['slurmfleet-eph-3f2a9c11']
    assert h.indexOf('sh nvidia-smi') > h.indexOf('node slurmfleet-eph-3f2a9c11')
    Map sent = new JsonSlurperClassic().parseText(h.daemon.requests[0].body)
    assert sent.cloud == 'my-cluster'
    assert new JsonSlurperClassic().parseText(sent.json).job.tres_per_job == 'gres/gpu:1'
}

// ---- runner -------------------------------------------------------------------------------------

String only = System.getenv('PIPELINE_TEST_FILTER')
int failed = 0
int passed = 0
tests.each { String name, Closure test ->
    if (only && !name.contains(only)) {
        return
    }
    PipelineHarness h = new PipelineHarness()
    try {
        test(h)
        assert noTouchThreadLeft() : 'a slurmfleet-touch thread is still running'
        passed++
        println "PASS  ${name}"
    } catch (Throwable t) {
        failed++
        println "FAIL  ${name}"
        StringWriter sw = new StringWriter()
        org.codehaus.groovy.runtime.StackTraceUtils.deepSanitize(t).printStackTrace(new PrintWriter(sw))
        println sw.toString().readLines().take(40).collect { '      ' + it }.join('\n')
        println "      timeline: ${h.timeline}"
        println "      echo: ${h.echoes}"
    } finally {
        h.close()
    }
}
println "${passed} passed, ${failed} failed"
System.exit(failed == 0 ? 0 : 1)
