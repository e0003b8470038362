#!/usr/bin/env bash
# bench/peers/build.sh OUT: build each peer of the pipeline benchmark into
# folder OUT, where its toolchain is installed, and say which it skipped
# and why (tools/deps --optional installs them from Debian):
#   OUT/tbb_pipeline        oneTBB flow_graph   (g++, libtbb-dev)
#   OUT/go_pipeline         Go channels         (golang-go)
#   OUT/crossbeam_pipeline  Rust crossbeam      (cargo, rustc,
#                           librust-crossbeam-channel-dev)
# The Rust peer builds offline: cargo's crates.io source is replaced by
# Debian's packaged registry (/usr/share/cargo/registry), in a copy of
# bench/peers/rust under OUT, so nothing is fetched and no lock file lands
# in the tree. Exits 0 when at least one peer built.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
built=0

say() { echo "bench/peers: $*" >&2; }

# A peer built after its source is kept: g++ has no cache of its own, and
# the flow graph's headers take it a while (go and cargo skip the work
# themselves).
if command -v g++ >/dev/null && [[ -f /usr/include/oneapi/tbb/flow_graph.h ]]; then
	if [[ $out/tbb_pipeline -nt $here/tbb_pipeline.cpp ]]; then
		built=$((built + 1))
	elif g++ -O2 -std=c++17 -Wall -Wextra -Werror -o "$out/tbb_pipeline" \
		"$here/tbb_pipeline.cpp" -ltbb; then
		built=$((built + 1))
	else
		say "oneTBB peer: the build failed"
	fi
else
	say "skipping the oneTBB peer: no g++ or no oneTBB headers (apt-get install g++ libtbb-dev)"
fi

if command -v go >/dev/null; then
	mkdir -p "$out/go-cache"
	if GOCACHE="$out/go-cache" GO111MODULE=off GOPATH="$out/go-path" \
		go build -o "$out/go_pipeline" "$here/go_pipeline.go"; then
		built=$((built + 1))
	else
		say "Go peer: the build failed"
	fi
else
	say "skipping the Go peer: no go (apt-get install golang-go)"
fi

# Debian's cargo when /usr/bin is in PATH, even behind a rustup cargo
# (which works as well); $CARGO overrides.
if [[ -n ${CARGO:-} ]]; then
	cargo=$CARGO
elif [[ -x /usr/bin/cargo && ":$PATH:" == *:/usr/bin:* ]]; then
	cargo=/usr/bin/cargo
else
	cargo=$(command -v cargo || true)
fi
registry=/usr/share/cargo/registry
if [[ -n $cargo ]] && compgen -G "$registry/crossbeam-channel-*" >/dev/null; then
	rs="$out/rust"
	mkdir -p "$rs/src" "$rs/cargo-home"
	cp "$here/rust/Cargo.toml" "$rs/"
	cp "$here/rust/src/main.rs" "$rs/src/"
	cat >"$rs/cargo-home/config.toml" <<CFG
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "$registry"
[net]
offline = true
CFG
	if CARGO_HOME="$rs/cargo-home" "$cargo" build --quiet --release --offline \
		--manifest-path "$rs/Cargo.toml" --target-dir "$rs/target" &&
		cp "$rs/target/release/crossbeam_pipeline" "$out/"; then
		built=$((built + 1))
	else
		say "Rust peer: the offline build failed"
	fi
else
	say "skipping the Rust peer: no cargo or no packaged crossbeam-channel (apt-get install cargo librust-crossbeam-channel-dev)"
fi

((built > 0))
