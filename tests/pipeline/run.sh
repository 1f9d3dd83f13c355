#!/bin/sh
# Runs the tests of the pipeline shared library (vars/) with Debian's groovy 2.4 on Java 17.
# Exits non-zero when a test fails or when groovy/Java are missing.
# PIPELINE_TEST_FILTER=substring runs only the tests whose name contains it.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if ! command -v groovy >/dev/null 2>&1; then
    echo "tests/pipeline/run.sh: error: groovy is not installed; the pipeline library tests need it." >&2
    echo "  Install Debian's package: apt-get install groovy   (scripts/install-deps.sh should do this)" >&2
    exit 1
fi

# /usr/bin/groovy runs $JAVA_HOME/bin/java and falls back to /usr/lib/jvm/default-java, which only
# exists with Debian's default-jre(-headless) package. Derive JAVA_HOME from `java` on PATH instead.
if [ -z "${JAVA_HOME:-}" ] || [ ! -x "${JAVA_HOME}/bin/java" ]; then
    if [ -x /usr/lib/jvm/default-java/bin/java ]; then
        JAVA_HOME=/usr/lib/jvm/default-java
    elif command -v java >/dev/null 2>&1; then
        JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
    else
        echo "tests/pipeline/run.sh: error: no Java found (install openjdk-17-jre-headless)." >&2
        exit 1
    fi
    export JAVA_HOME
fi

# No --add-opens is needed: Debian's groovy 2.4.21 runs these tests on Java 17 without warnings
# (checked on 17.0.15; Temurin 25 works too, with sun.misc.Unsafe deprecation warnings).

if ! version=$(groovy -v 2>&1); then
    echo "tests/pipeline/run.sh: error: groovy does not start: $version" >&2
    exit 1
fi
echo "$version"

cd "$root"
exec groovy -Dpipeline.root="$root" "$here/PipelineLibraryTest.groovy"
