#!/usr/bin/env bash
# Prepares a machine for `make test`: the tests start real redis-server
# processes (internal/testing/redistest), the race detector needs a C compiler, and the
# Go modules are downloaded up front.
#
# Installs missing packages with apt-get when running as root or with
# passwordless sudo; otherwise prints what to install and exits 1.
set -euo pipefail

cd "$(dirname "$0")/.."

redis_hint="install redis-server: sudo apt-get install -y redis-server, or brew install redis"
cc_hint="install a C compiler for go test -race: sudo apt-get install -y gcc libc6-dev, or xcode-select --install"

# as_root runs a command as root, directly or with passwordless sudo; it fails
# if neither is possible.
as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		sudo "$@"
	else
		return 1
	fi
}

can_apt_install() {
	command -v apt-get >/dev/null 2>&1 && as_root true
}

apt_updated=no
apt_install() {
	if [ "$apt_updated" = no ]; then
		as_root apt-get update -qq || echo "setup: apt-get update failed; trying the install anyway" >&2
		apt_updated=yes
	fi
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

# redis-server: started by the tests on their own ports, so no running
# daemon is needed; only the binary.
if ! command -v redis-server >/dev/null 2>&1; then
	if ! can_apt_install; then
		echo "setup: redis-server not found; $redis_hint" >&2
		exit 1
	fi
	echo "setup: redis-server not found; installing it with apt-get"
	apt_install redis-server
	if ! command -v redis-server >/dev/null 2>&1; then
		echo "setup: redis-server still not on PATH after apt-get install; $redis_hint" >&2
		exit 1
	fi
fi
echo "setup: $(command -v redis-server): $(redis-server --version)"

# spin checks the protocol models (make model); it compiles its verifiers
# with gcc, installed below if missing.
if ! command -v spin >/dev/null 2>&1; then
	if ! can_apt_install; then
		echo "setup: spin not found; install it: sudo apt-get install -y spin gcc, or brew install spin" >&2
		exit 1
	fi
	echo "setup: spin not found; installing it with apt-get"
	apt_install spin
	if ! command -v spin >/dev/null 2>&1; then
		echo "setup: spin still not on PATH after apt-get install" >&2
		exit 1
	fi
fi
echo "setup: $(command -v spin): $(spin -V)"

# tmux runs the demo's live view in a real terminal (cmd/lockbridge tests).
if ! command -v tmux >/dev/null 2>&1; then
	if ! can_apt_install; then
		echo "setup: tmux not found; install it: sudo apt-get install -y tmux, or brew install tmux" >&2
		exit 1
	fi
	echo "setup: tmux not found; installing it with apt-get"
	apt_install tmux
	if ! command -v tmux >/dev/null 2>&1; then
		echo "setup: tmux still not on PATH after apt-get install" >&2
		exit 1
	fi
fi
echo "setup: $(command -v tmux): $(tmux -V)"

# go test -race needs cgo, which the go command turns off when it finds no C
# compiler.
cc="$(go env CC)"
if ! command -v "$cc" >/dev/null 2>&1; then
	if ! can_apt_install; then
		echo "setup: C compiler $cc not found; $cc_hint" >&2
		exit 1
	fi
	echo "setup: C compiler $cc not found; installing gcc with apt-get"
	apt_install gcc libc6-dev
fi

# A JDK (17+) and Maven build and run the Java worker of the interop tests
# (interop/java); Maven fetches its dependencies from Maven Central.
if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
	if ! can_apt_install; then
		echo "setup: java or mvn not found; install a JDK and Maven: sudo apt-get install -y openjdk-17-jdk-headless maven" >&2
		exit 1
	fi
	echo "setup: java or mvn not found; installing a JDK and Maven with apt-get"
	if ! apt_install openjdk-17-jdk-headless maven; then
		# Newer Debian releases ship a newer JDK only.
		apt_install default-jdk-headless maven
	fi
	if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
		echo "setup: java or mvn still not on PATH after apt-get install" >&2
		exit 1
	fi
fi
echo "setup: $(command -v java): $(java -version 2>&1 | head -1)"
echo "setup: $(command -v mvn): $(mvn -v 2>/dev/null | head -1)"

go mod download
echo "setup: ok"
