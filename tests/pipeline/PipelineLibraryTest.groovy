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
// shared timeline; `respond` decides the answer and can be replaced per test.
class FakeDaemon {
    final HttpServer server
    final List<Map> requests = Collections.synchronizedList([])
    final List<String> timeline
    int registered = 0
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

    Map defaultAnswer(Map req) {
        if (req.method == 'POST' && req.path == '/api/v1/templates') {
            registered++
            String name = 'eph-3f2a9c1' + registered
            Map doc = new groovy.json.JsonSlurperClassic().parseText(req.body)
            return [status: 201, body: JsonOutput.toJson([name: name, label: 'slurmfleet-' + name,
                                                          cloud: doc.cloud, expires_at: '2026-01-01T00:00:00Z',
                                                          expires_at_unix: 1767225600])]
        }
        if (req.method == 'POST' && req.path ==~ '/api/v1/templates/[^/]+/touch') {
            return [status: 200, body: '{"expires_at": "2026-01-01T01:00:00Z", "expires_at_unix": 1767229200}']
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
        binding.setVariable('currentBuild', new Expando(rawBuild: new Expando(isBuilding: { -> building })))
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
        return shell.evaluate(script)
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
    assert sent.keySet() == ['cloud', 'json', 'ttlSeconds', 'owner', 'job'] as Set
    assert sent.cloud == 'my-cluster'
    assert sent.json == JSON                  // the text exactly as written, as a JSON string
    assert sent.ttlSeconds == 3600
    assert sent.owner == 'team/gpu-tests #7'
    assert sent.job == 'team/gpu-tests'
    assert h.daemon.requests[1].authorization == "Bearer ${PipelineHarness.TOKEN}".toString()
    assert h.env.SLURM_LABEL == null          // withEnv ended with the block
    assert h.echoes.any { it.contains('registered template eph-3f2a9c11') && it.contains('slurmfleet-eph-3f2a9c11') }
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
    h.run("slurmJobTemplate(cloud: 'c', json: '{}', touchIntervalSeconds: 1) { Thread.sleep(3500) }")
    assert h.daemon.requests('POST', '/api/v1/templates/eph-3f2a9c11/touch').size() == 1
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
