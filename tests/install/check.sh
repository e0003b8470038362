#!/usr/bin/env bash
# tests/install/check.sh SOURCE_DIR BUILD_DIR: subcirc as a user meets it.
# Installs BUILD_DIR into a temporary prefix, checks what is there (the
# libraries, SONAME, position-independent archive, headers, subcirc.pc, the
# package config, the CLI, no jemalloc forced on users), then builds and runs
# three consumers outside the tree:
#   1. consumer.c through pkg-config, linked shared and linked static;
#   2. cxx/ (C++) through find_package(subcirc), shared and static;
#   3. subdir/, which add_subdirectory()s the source tree, configured with
#      no pkg-config module but ck visible, so nothing of the test tools
#      (Criterion, spin) or jemalloc can be needed.
# Each consumer runs a small circuit on 2 workers and checks its result.
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

step "the files a user needs"
for f in lib/libsubcirc.a lib/libsubcirc.so lib/libsubcirc.so.0 \
	lib/pkgconfig/subcirc.pc lib/cmake/subcirc/subcircConfig.cmake \
	lib/cmake/subcirc/subcircConfigVersion.cmake \
	lib/cmake/subcirc/subcircTargets.cmake bin/subcirc \
	include/subcirc/subcirc.h; do
	[[ -e $P/$f ]] || fail "$f is not installed"
done
export PKG_CONFIG_PATH=$P/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
version=$(pkg-config --modversion subcirc)
[[ $("$P/bin/subcirc" --version) == "subcirc $version" ]] ||
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

step "the archive is position-independent (it links into a shared object)"
if readelf -r "$P/lib/libsubcirc.a" | grep -q 'R_X86_64_TPOFF32'; then
	fail "libsubcirc.a has TPOFF32 relocations (not -fPIC)"
fi
"$CC" -shared -o "$work/wrap.so" -Wl,--whole-archive "$P/lib/libsubcirc.a" \
	-Wl,--no-whole-archive $(pkg-config --static --libs-only-l ck) -pthread -lm ||
	fail "libsubcirc.a does not link into a shared object"

step "headers: every public one installed, no *_int.h, includes resolve"
inc=$P/include/subcirc
(cd "$src" && ls operators/*.h runtime/*.h units/*.h | grep -v '_int\.h$' | sort) >"$work/public"
(cd "$inc" && ls operators/*.h runtime/*.h units/*.h | sort) >"$work/installed"
diff -u "$work/public" "$work/installed" ||
	fail "the installed headers are not the public headers of the tree"
if find "$P/include" -name '*_int.h' | grep .; then
	fail "an internal header is installed"
fi
for h in subcirc.h $(cat "$work/installed"); do
	{ grep -o '^#include "[^"]*"' "$inc/$h" || true; } | sed 's/^#include "\(.*\)"/\1/' |
		while read -r dep; do
			[[ -f $inc/$dep ]] || fail "$h includes \"$dep\", which is not installed"
		done
	grep -q "$h" "$inc/subcirc.h" || [[ $h == subcirc.h ]] ||
		fail "subcirc.h does not include $h"
done

step "headers: each compiles alone as C11 and as C++11, from the prefix only"
cflags=$(pkg-config --cflags subcirc)
for h in subcirc/subcirc.h $(sed 's|^|subcirc/|' "$work/installed"); do
	printf '#include <%s>\n' "$h" >"$work/one.c"
	"$CC" -std=c11 -Wall -Wextra -Werror $cflags -fsyntax-only "$work/one.c" ||
		fail "$h does not compile as C11"
	cp "$work/one.c" "$work/one.cpp"
	"$CXX" -std=c++11 -Wall -Wextra -Werror $cflags -fsyntax-only "$work/one.cpp" ||
		fail "$h does not compile as C++11"
done

step "no allocator forced on users; pkg-config and the CMake config agree"
if grep -il jemalloc "$P/lib/pkgconfig/subcirc.pc" "$P"/lib/cmake/subcirc/*.cmake; then
	fail "subcirc.pc or the package config names jemalloc"
fi
if readelf -d "$P/lib/libsubcirc.so" | grep NEEDED | grep -i jemalloc; then
	fail "libsubcirc.so needs jemalloc"
fi
[[ $(pkg-config --print-requires-private subcirc) == ck ]] ||
	fail "subcirc.pc: Requires.private is not ck"
pc_libs=$(pkg-config --static --libs subcirc)
targets=$(cat "$P"/lib/cmake/subcirc/subcircTargets.cmake)
for dep in pthread:Threads::Threads m:LINK_ONLY:m ck:PkgConfig::CK; do
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

step "consumer 3: C through add_subdirectory, with only ck visible to pkg-config"
mkdir "$work/pc"
ln -s "$(pkg-config --variable=pcfiledir ck)/ck.pc" "$work/pc/ck.pc"
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

step "the tree configures at the top without the test tools (BUILD_TESTING=OFF)"
PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=$work/pc \
	cmake -S "$src" -B "$work/notest" -G Ninja -DBUILD_TESTING=OFF \
	-DSC_BUILD_TOOLS=OFF >"$work/notest.log" ||
	fail "BUILD_TESTING=OFF: configure: $(cat "$work/notest.log")"
if grep -E '^(CRITERION|JEMALLOC|SPIN)_' "$work/notest/CMakeCache.txt"; then
	fail "BUILD_TESTING=OFF still looked for a test tool or jemalloc"
fi

echo "install check: all green"
