// slurmAgent: an ephemeral slurmfleet template and a node on it, in one call.
//
//   slurmAgent(cloud: 'my-cluster', json: '{"job": {"partition": "gpu"}}') {
//       sh 'nvidia-smi'        // runs on the Slurm agent
//   }
//
// is slurmJobTemplate(cloud: ..., json: ...) { node(SLURM_LABEL) { ... } }, and prints the agent's
// "Submitted Slurm job N" line first. It takes the same arguments (cloud, json, ttlSeconds, daemonUrl,
// credentialsId, touchIntervalSeconds, and the properties partition, workingDir, javaPath, jarPath,
// downloadJar, setupScript) and returns the body's value. Declarative `agent { }` blocks cannot call steps, so in a declarative pipeline use it
// from `steps { script { ... } }` in a stage with no agent of its own (see docs/pipelines.md).
// A static template's label needs none of this: `agent { label 'gpu' }` works as is.

def call(Map args = [:], Closure body) {
    if (body == null) {
        error(saNoBody())
    }
    Map given = args == null ? [:] : args
    return slurmJobTemplate(given) {
        node(env.SLURM_LABEL) {
            slurmJobTemplate.printSlurmJob(daemonUrl: given.daemonUrl, credentialsId: given.credentialsId)
            body()
        }
    }
}

def call(Map args) {
    error(saNoBody())
}

@NonCPS
String saNoBody() {
    return 'slurmAgent: missing the body block; write ' +
           "slurmAgent(cloud: 'my-cluster', json: '{...}') { sh '...' }"
}
