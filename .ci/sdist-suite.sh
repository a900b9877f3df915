# What the runs of a Python package's own tests against lapse share
# (.ci/kombu-integration-tests, .ci/celery-integration-tests and
# .ci/python-cosmos-sdk-tests): the venv with requirements.txt and the
# suites' tools, a scratch folder removed on exit with the lapse started
# in it, the package's source distribution at the pinned version, fetched
# from PyPI at run time and unpacked, and a lapse built from this checkout.
# Sourced from the repository's root, by a script that has set -euo
# pipefail:
#
#   . .ci/sdist-suite.sh
#   sdist_setup OUT               sets venv, work and out (OUT, emptied)
#   src=$(sdist_fetch NAME VERSION)   the unpacked source folder
#   port=$(free_port)
#   lapse_start FLAGS...          every listener on :0 and --data :memory:
#                                 but what FLAGS set; its log in $out
#   wait_tcp PORT

venv=.ci/venv
work=
out=
pid=

sdist_cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
	if [ -n "$work" ]; then rm -rf "$work"; fi
}

# sdist_setup OUT: the venv with requirements.txt and .ci/python-sdk-tests.txt
# at the versions .ci/python-constraints.txt pins, a scratch folder (work),
# and OUT emptied for the suite's logs, which stay for reading.
sdist_setup() {
	if [ ! -x "$venv/bin/python" ]; then
		python3 -m venv "$venv"
	fi
	"$venv/bin/pip" install -q --disable-pip-version-check -r requirements.txt -r .ci/python-sdk-tests.txt \
		-c .ci/python-constraints.txt
	work=$(mktemp -d)
	trap sdist_cleanup EXIT
	out=$1
	rm -rf "$out"
	mkdir -p "$out"
}

# sdist_fetch NAME VERSION: prints the folder NAME's source distribution
# unpacks to, under work.
sdist_fetch() {
	local dl="$work/sdist-$1"
	mkdir -p "$dl/src"
	"$venv/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary :all: -d "$dl" "$1==$2"
	tar xzf "$dl"/*.tar.gz -C "$dl/src"
	local dirs=("$dl"/src/*/)
	if [ "${#dirs[@]}" -ne 1 ]; then
		echo "the source distribution of $1 $2 unpacks to ${#dirs[@]} folders, not one" >&2
		return 1
	fi
	echo "${dirs[0]%/}"
}

# free_port: a TCP port of 127.0.0.1 that nothing listens on now.
free_port() {
	"$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# lapse_start FLAGS...: builds lapse into work and starts it in the
# background (pid), in memory and with every listener on a free port but
# those FLAGS name (a later flag wins), logging warnings to out/lapse.log.
lapse_start() {
	go build -o "$work/lapse" ./cmd/lapse
	"$work/lapse" --data :memory: --amqp-addr :0 --amqps-addr :0 --cosmos-addr :0 --control-addr :0 \
		--servicebus-admin-addr :0 --servicebus-websocket-addr :0 --rabbitmq-management-addr :0 \
		--log-level warn "$@" >"$out/lapse.log" 2>&1 &
	pid=$!
}

# wait_tcp PORT: returns once 127.0.0.1:PORT takes connections, and fails
# after 10 s.
wait_tcp() {
	"$venv/bin/python" - "$1" <<'PY'
import socket, sys, time
deadline = time.time() + 10
while True:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
        break
    except OSError:
        if time.time() > deadline:
            sys.exit("lapse does not listen on 127.0.0.1:%s after 10 s" % sys.argv[1])
        time.sleep(0.1)
PY
}
