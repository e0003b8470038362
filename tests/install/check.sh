#!/usr/bin/env bash
# tests/install/check.sh SOURCE_DIR BUILD_DIR: subcirc as a user meets it.
# Installs BUILD_DIR into a temporary prefix, checks what is there (the
# libraries, SONAME, position-independent archive, headers, subcirc.pc, the
# package config, the CLI, no jemalloc forced on users), then builds and runs
# the consumers outside the tree:
#   1. consumer.c through pkg-config, linked shared and linked static;
#   2. cxx/ (C++) through find_package(subcirc), shared and static;
#   3. subdir/, which add_subdirectory()s the source tree, configured with
#      no pkg-config module but ck and libpcre2-8 visible, so nothing of the test tools
#      (Criterion, spin) or jemalloc can be needed;
#   then the example workload plugins (tests/examples/payments.c and
#   running.c), built from their installed copies through pkg-config, each
#   loaded by the installed `subcirc place` and by plugin_host.c, a host
#   linked with libsubcirc.so;
#   4. with MPI, mpi/consumer_mpi.c through pkg-config subcirc-mpi and
#      through find_package(subcirc COMPONENTS mpi), run under mpirun -np 2
#      (skipped, and said so, without Open MPI's ompi-c and mpirun).
# Each consumer runs a small circuit on 2 workers and checks its result.
# The headers an install must hold, and whether libsubcirc-mpi was built,
# come from BUILD_DIR/sc_surface.txt (cmake/sc_surface.cmake), which the
# lists of CMakeLists.txt make.
# Registered with ctest as install.consumers (tools/test runs it); exits
# non-zero on the first failure.
set -euo pipefail
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
work=$(mktemp -d)
# SC_INSTALL_KEEP=1 keeps the prefix and the consumers' builds to look at.
if [[ -n ${SC_INSTALL_KEEP:-} ]]; then
	echo "install check: keeping $work"
else
	trap 'rm -rf "$work"' EXIT
fi
P=$work/prefix
CC=${CC:-cc}
CXX=${CXX:-c++}

fail() {
	echo "install check: FAIL: $*" >&2
	exit 1
}
step() { echo "== install check: $*"; }

step "cmake --install into a temporary prefix"
cmake --install "$build" --prefix "$P" >"$work/install.log" ||
	fail "cmake --install: $(cat "$work/install.log")"
(cd "$P" && find . \( -type f -o -type l \) | sed 's|^\./||' | sort) |
	tee "$work/files"

surface=$build/sc_surface.txt
[[ -f $surface ]] || fail "$surface is missing (configure writes it)"
listed() { sed -n "s/^$1 //p" "$surface" | sort; }
mpi=
if grep -qx 'library subcirc-mpi' "$surface"; then
	mpi=1
fi

step "the files a user needs"
for f in lib/libsubcirc.a lib/libsubcirc.so lib/libsubcirc.so.0 \
	lib/pkgconfig/subcirc.pc lib/cmake/subcirc/subcircConfig.cmake \
	lib/cmake/subcirc/subcircConfigVersion.cmake \
	lib/cmake/subcirc/subcircTargets.cmake bin/subcirc \
	include/subcirc/subcirc.h; do
	[[ -e $P/$f ]] || fail "$f is not installed"
done
if [[ -n $mpi ]]; then
	for f in lib/libsubcirc-mpi.a lib/libsubcirc-mpi.so lib/libsubcirc-mpi.so.0 \
		lib/pkgconfig/subcirc-mpi.pc lib/cmake/subcirc/subcircMpiTargets.cmake \
		include/subcirc/subcirc_mpi.h; do
		[[ -e $P/$f ]] || fail "$f is not installed (libsubcirc-mpi was built)"
	done
elif find "$P" -name '*subcirc-mpi*' -o -name 'subcirc_mpi.h' | grep .; then
	fail "libsubcirc-mpi was not built, yet some of it is installed"
fi
export PKG_CONFIG_PATH=$P/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
version=$(pkg-config --modversion subcirc)
# "subcirc VERSION (commit C)": the commit it was built from.
[[ $("$P/bin/subcirc" --version) == "subcirc $version (commit "*")" ]] ||
	fail "bin/subcirc --version does not say $version"
soname=$(readelf -d "$P/lib/libsubcirc.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[[ $soname == "libsubcirc.so.${version%%.*}" ]] ||
	fail "SONAME is '$soname', not libsubcirc.so.${version%%.*}"

step "the shared library exports the API and no other internals (cmake/subcirc.map)"
allowed="sc__assert_fail sc__batch_builder_push_slow sc__xsum_add_slow sc__xsum_tick"
nm -D --defined-only "$P/lib/libsubcirc.so" | awk '{print $3}' >"$work/exports"
grep -q '^sc_runtime_create$' "$work/exports" ||
	fail "libsubcirc.so does not export sc_runtime_create"
for s in $(grep '^sc__' "$work/exports"); do
	[[ " $allowed " == *" $s "* ]] || fail "libsubcirc.so exports the internal $s"
done
other=$(grep -v '^sc_' "$work/exports" || true)
[[ -z $other ]] || fail "libsubcirc.so exports names without the sc_ prefix: $other"
if grep '^sc_mpi_' "$work/exports"; then
	fail "libsubcirc.so exports MPI symbols (they are libsubcirc-mpi's)"
fi

if [[ -n $mpi ]]; then
	step "libsubcirc-mpi.so exports sc_mpi_* only and links libsubcirc.so (cmake/subcirc_mpi.map)"
	nm -D --defined-only "$P/lib/libsubcirc-mpi.so" | awk '{print $3}' >"$work/mpi_exports"
	for s in sc_mpi_runtime_create sc_mpi_runtime_destroy sc_mpi_runtime_rt \
		sc_mpi_link_create sc_mpi_link_destroy; do
		grep -qx "$s" "$work/mpi_exports" || fail "libsubcirc-mpi.so does not export $s"
	done
	other=$(grep -v '^sc_mpi_' "$work/mpi_exports" || true)
	[[ -z $other ]] || fail "libsubcirc-mpi.so exports names other than sc_mpi_*: $other"
	soname=$(readelf -d "$P/lib/libsubcirc-mpi.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
	[[ $soname == "libsubcirc-mpi.so.${version%%.*}" ]] ||
		fail "libsubcirc-mpi.so's SONAME is '$soname'"
	readelf -d "$P/lib/libsubcirc-mpi.so" | grep NEEDED | grep -q "\[libsubcirc.so.${version%%.*}\]" ||
		fail "libsubcirc-mpi.so does not need libsubcirc.so.${version%%.*}"
fi

step "the archive is position-independent (it links into a shared object)"
if readelf -r "$P/lib/libsubcirc.a" | grep -q 'R_X86_64_TPOFF32'; then
	fail "libsubcirc.a has TPOFF32 relocations (not -fPIC)"
fi
"$CC" -shared -o "$work/wrap.so" -Wl,--whole-archive "$P/lib/libsubcirc.a" \
	-Wl,--no-whole-archive $(pkg-config --static --libs-only-l ck libpcre2-8) -pthread -lm ||
	fail "libsubcirc.a does not link into a shared object"

step "headers: the listed ones installed and no other, umbrellas exact, includes resolve"
inc=$P/include/subcirc
umbrellas=subcirc.h
# Every header of the tree is in sc_surface.txt or named *_int.h (configure
# refuses anything else; this checks that the list it wrote says so too).
(cd "$src" && ls operators/*.h runtime/*.h units/*.h | grep -v '_int\.h$' | sort) >"$work/tree"
sed -n 's/^\(public\|mpi\|internal\) //p' "$surface" | sort >"$work/listed"
diff -u "$work/tree" "$work/listed" ||
	fail "sc_surface.txt does not name every header of the tree (reconfigure?)"
listed public >"$work/public"
if [[ -n $mpi ]]; then
	umbrellas="subcirc.h subcirc_mpi.h"
	{ listed public; listed mpi; } | sort >"$work/expected"
else
	cp "$work/public" "$work/expected"
fi
(cd "$inc" && ls operators/*.h runtime/*.h units/*.h | sort) >"$work/installed"
diff -u "$work/expected" "$work/installed" ||
	fail "the installed headers are not the listed public headers"
if find "$P/include" -name '*_int.h' | grep .; then
	fail "an internal header is installed"
fi
for h in $umbrellas $(cat "$work/installed"); do
	{ grep -o '^#include "[^"]*"' "$inc/$h" || true; } | sed 's/^#include "\(.*\)"/\1/' |
		while read -r dep; do
			[[ -f $inc/$dep || -f $P/include/$dep ]] ||
				fail "$h includes \"$dep\", which is not installed"
		done
done
# umbrella_is FILE LIST: FILE includes exactly the headers of LIST.
umbrella_is() {
	{ grep -o '^#include "\(operators\|runtime\|units\)/[^"]*"' "$inc/$1" || true; } |
		sed 's/^#include "\(.*\)"/\1/' | sort >"$work/umbrella"
	diff -u "$2" "$work/umbrella" || fail "$1 does not include exactly its list"
}
umbrella_is subcirc.h "$work/public"
if [[ -n $mpi ]]; then
	listed mpi >"$work/mpi_headers"
	umbrella_is subcirc_mpi.h "$work/mpi_headers"
fi

step "headers: each compiles alone as C11 and as C++11, from the prefix only"
cflags=$(pkg-config --cflags subcirc)
for h in $(printf 'subcirc/%s\n' $umbrellas) $(sed 's|^|subcirc/|' "$work/installed"); do
	printf '#include <%s>\n' "$h" >"$work/one.c"
	"$CC" -std=c11 -Wall -Wextra -Werror $cflags -fsyntax-only "$work/one.c" ||
		fail "$h does not compile as C11"
	cp "$work/one.c" "$work/one.cpp"
	"$CXX" -std=c++11 -Wall -Wextra -Werror $cflags -fsyntax-only "$work/one.cpp" ||
		fail "$h does not compile as C++11"
done

step "no allocator forced on users; pkg-config and the CMake config agree"
if grep -il jemalloc "$P"/lib/pkgconfig/subcirc*.pc "$P"/lib/cmake/subcirc/*.cmake; then
	fail "subcirc.pc or the package config names jemalloc"
fi
for so in "$P"/lib/libsubcirc*.so; do
	if readelf -d "$so" | grep NEEDED | grep -i jemalloc; then
		fail "$so needs jemalloc"
	fi
done
[[ $(pkg-config --print-requires-private subcirc | tr '\n' ' ') == "ck libpcre2-8 " ]] ||
	fail "subcirc.pc: Requires.private is not ck and libpcre2-8"
pc_libs=$(pkg-config --static --libs subcirc)
targets=$(cat "$P"/lib/cmake/subcirc/subcircTargets.cmake)
for dep in pthread:Threads::Threads m:LINK_ONLY:m ck:PkgConfig::CK \
	pcre2-8:PkgConfig::PCRE2; do
	pc=${dep%%:*} cm=${dep#*:}
	[[ " $pc_libs " == *" -l$pc "* || " $pc_libs " == *" -$pc "* ]] ||
		fail "subcirc.pc --static --libs lacks $pc ($pc_libs)"
	[[ $targets == *"$cm"* ]] || fail "the package config lacks $cm"
done

needs() { readelf -d "$1" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p'; }

step "consumer 1: C through pkg-config, shared"
"$CC" -std=c11 -Wall -Wextra -Werror -o "$work/c_shared" "$src/tests/install/consumer.c" \
	$(pkg-config --cflags --libs subcirc) -Wl,-rpath,"$P/lib"
needs "$work/c_shared" | grep -qx libsubcirc.so.0 || fail "c_shared does not need libsubcirc.so.0"
! needs "$work/c_shared" | grep -i jemalloc || fail "c_shared needs jemalloc"
"$work/c_shared" || fail "the shared pkg-config consumer got a wrong result"

step "consumer 1: C through pkg-config, static"
static_libs=$(pkg-config --static --libs subcirc)
"$CC" -std=c11 -Wall -Wextra -Werror -o "$work/c_static" "$src/tests/install/consumer.c" \
	$(pkg-config --cflags subcirc) ${static_libs/-lsubcirc/-l:libsubcirc.a}
! needs "$work/c_static" | grep -q libsubcirc || fail "c_static needs libsubcirc.so"
"$work/c_static" || fail "the static pkg-config consumer got a wrong result"

step "consumer 2: C++ through find_package(subcirc)"
cmake -S "$src/tests/install/cxx" -B "$work/cxx" -G Ninja \
	-DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_PREFIX_PATH="$P" >"$work/cxx.log" ||
	fail "find_package consumer: configure: $(cat "$work/cxx.log")"
cmake --build "$work/cxx" >>"$work/cxx.log" ||
	fail "find_package consumer: build: $(cat "$work/cxx.log")"
needs "$work/cxx/consumer_shared" | grep -qx libsubcirc.so.0 ||
	fail "consumer_shared does not need libsubcirc.so.0"
! needs "$work/cxx/consumer_static" | grep -q libsubcirc || fail "consumer_static needs libsubcirc.so"
for exe in consumer_shared consumer_static; do
	! needs "$work/cxx/$exe" | grep -i jemalloc || fail "$exe needs jemalloc"
	"$work/cxx/$exe" || fail "the find_package consumer $exe got a wrong result"
done

step "consumer 3: C through add_subdirectory, with only ck and libpcre2-8 visible to pkg-config"
mkdir "$work/pc"
ln -s "$(pkg-config --variable=pcfiledir ck)/ck.pc" "$work/pc/ck.pc"
ln -s "$(pkg-config --variable=pcfiledir libpcre2-8)/libpcre2-8.pc" "$work/pc/libpcre2-8.pc"
PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=$work/pc \
	cmake -S "$src/tests/install/subdir" -B "$work/subdir" -G Ninja \
	-DSUBCIRC_SOURCE_DIR="$src" >"$work/subdir.log" ||
	fail "add_subdirectory consumer: configure: $(cat "$work/subdir.log")"
if grep -E '^(CRITERION|JEMALLOC|SPIN)_' "$work/subdir/CMakeCache.txt"; then
	fail "the subproject looked for a test tool or jemalloc"
fi
cmake --build "$work/subdir" >>"$work/subdir.log" ||
	fail "add_subdirectory consumer: build: $(cat "$work/subdir.log")"
! needs "$work/subdir/consumer" | grep -i jemalloc || fail "the subdir consumer needs jemalloc"
"$work/subdir/consumer" || fail "the add_subdirectory consumer got a wrong result"

step "workload plugins: the installed examples built with pkg-config, loaded by the installed CLI and by a host"
# As the README says: the plugin records libsubcirc.so (found through its
# rpath), and its references bind to the host's library, the CLI's own
# copy (it exports it) or the libsubcirc.so a host links.
examples=$P/share/doc/subcirc/examples
for ex in payments running; do
	[[ -f $examples/$ex.c ]] || fail "share/doc/subcirc/examples/$ex.c is not installed"
	(cd "$work" && "$CC" -std=c11 -Wall -Wextra -Werror -shared -fPIC "$examples/$ex.c" \
		$(pkg-config --cflags --libs subcirc) -Wl,-rpath,"$P/lib" -o "lib$ex.so") ||
		fail "the installed $ex.c does not build as a plugin"
	needs "$work/lib$ex.so" | grep -qx libsubcirc.so.0 || fail "lib$ex.so does not need libsubcirc.so.0"
	out=$(cd "$work" && "$P/bin/subcirc" place --workload "./lib$ex.so" --workers 1 \
		--placements single,chains --reps 1 2>&1) ||
		fail "the installed subcirc place does not take ./lib$ex.so: $out"
	[[ $out == *"decision: "* ]] || fail "place --workload ./lib$ex.so ranked nothing: $out"
done
# The plugin's message reaches the CLI: one library, one error state.
out=$(cd "$work" && "$P/bin/subcirc" place --workload ./libpayments.so --workload-arg users=0 2>&1) &&
	fail "place took users=0"
[[ $out == *"users=0: not a whole number"* ]] ||
	fail "place lost the plugin's message: $out"
"$CC" -std=c11 -Wall -Wextra -Werror -o "$work/plugin_host" "$src/tests/install/plugin_host.c" \
	$(pkg-config --cflags --libs subcirc) -Wl,-rpath,"$P/lib"
for ex in payments running; do
	"$work/plugin_host" "$work/lib$ex.so" || fail "plugin_host did not run lib$ex.so right"
done

step "consumer 4: MPI, through pkg-config subcirc-mpi and find_package(subcirc COMPONENTS mpi)"
mpirun=$(command -v mpirun || true)
if [[ -z $mpi ]]; then
	echo "install check: skipped the MPI consumer: libsubcirc-mpi was not built (no MPI)"
elif ! pkg-config --exists ompi-c || [[ -z $mpirun ]]; then
	echo "install check: skipped the MPI consumer: needs Open MPI (pkg-config ompi-c and mpirun)"
else
	pc_mpi=$(pkg-config --libs subcirc-mpi)
	for l in -lsubcirc-mpi -lsubcirc -lmpi; do
		[[ " $pc_mpi " == *" $l "* ]] || fail "pkg-config --libs subcirc-mpi lacks $l ($pc_mpi)"
	done
	"$CC" -std=c11 -Wall -Wextra -Werror -o "$work/mpi_pc" \
		"$src/tests/install/mpi/consumer_mpi.c" \
		$(pkg-config --cflags --libs subcirc-mpi) -Wl,-rpath,"$P/lib" ||
		fail "the pkg-config MPI consumer does not build"
	needs "$work/mpi_pc" | grep -qx libsubcirc-mpi.so.0 ||
		fail "mpi_pc does not need libsubcirc-mpi.so.0"
	cmake -S "$src/tests/install/mpi" -B "$work/mpi" -G Ninja \
		-DCMAKE_C_COMPILER="$CC" -DCMAKE_PREFIX_PATH="$P" >"$work/mpi.log" ||
		fail "find_package MPI consumer: configure: $(cat "$work/mpi.log")"
	cmake --build "$work/mpi" >>"$work/mpi.log" ||
		fail "find_package MPI consumer: build: $(cat "$work/mpi.log")"
	needs "$work/mpi/consumer_mpi_shared" | grep -qx libsubcirc-mpi.so.0 ||
		fail "consumer_mpi_shared does not need libsubcirc-mpi.so.0"
	! needs "$work/mpi/consumer_mpi_static" | grep -q libsubcirc ||
		fail "consumer_mpi_static needs a libsubcirc shared library"
	# Open MPI refuses root unless told, and more ranks than cores unless
	# oversubscribed.
	for exe in "$work/mpi_pc" "$work/mpi/consumer_mpi_shared" "$work/mpi/consumer_mpi_static"; do
		! needs "$exe" | grep -i jemalloc || fail "$exe needs jemalloc"
		timeout 300 "$mpirun" --allow-run-as-root --oversubscribe -np 2 "$exe" ||
			fail "the MPI consumer $(basename "$exe") failed under mpirun -np 2"
	done
fi

step "a header in no list stops the configure (cmake/sc_surface.cmake)"
mkdir "$work/stray"
cp -r "$src/CMakeLists.txt" "$src/cmake" "$src/operators" "$src/runtime" "$src/units" "$work/stray/"
printf '/* in no list */\n' >"$work/stray/units/stray.h"
if PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=$work/pc \
	cmake -S "$work/stray" -B "$work/stray/build" -G Ninja -DBUILD_TESTING=OFF \
	-DSC_BUILD_TOOLS=OFF -DSC_INSTALL=OFF >"$work/stray.log" 2>&1; then
	fail "configure accepted units/stray.h, which no list names"
fi
grep -q 'units/stray.h: in no list' "$work/stray.log" ||
	fail "configure failed without naming units/stray.h: $(cat "$work/stray.log")"

step "the tree configures at the top without the test tools (BUILD_TESTING=OFF)"
PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=$work/pc \
	cmake -S "$src" -B "$work/notest" -G Ninja -DBUILD_TESTING=OFF \
	-DSC_BUILD_TOOLS=OFF >"$work/notest.log" ||
	fail "BUILD_TESTING=OFF: configure: $(cat "$work/notest.log")"
if grep -E '^(CRITERION|JEMALLOC|SPIN)_' "$work/notest/CMakeCache.txt"; then
	fail "BUILD_TESTING=OFF still looked for a test tool or jemalloc"
fi

echo "install check: all green"
