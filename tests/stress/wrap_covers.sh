#!/usr/bin/env bash
# wrap_covers.sh ARCHIVE WRAPPED...: fail if the library in ARCHIVE calls
# an allocating function of libc that test_alloc does not wrap (the names
# WRAPPED, ld's --wrap list in tests/CMakeLists.txt). A new allocator call
# in the library would otherwise never fail in the sweep, silently.
#
# open_memstream allocates inside libc (its buffer grows by libc's own
# malloc, out of --wrap's reach), so it cannot be wrapped; it is listed
# as known and reported, not failed on.
set -euo pipefail
archive=$1
shift
allocators=(malloc calloc realloc reallocarray aligned_alloc posix_memalign
	memalign valloc pvalloc strdup strndup asprintf vasprintf getline
	getdelim realpath)
known_unwrappable=(open_memstream)

used=$(nm -u --format=posix "$archive" 2>/dev/null | awk '{print $1}' | sort -u)
missing=()
for f in "${allocators[@]}"; do
	grep -qx "$f" <<<"$used" || continue
	wrapped=0
	for w in "$@"; do
		[[ $w == "$f" ]] && wrapped=1
	done
	((wrapped)) || missing+=("$f")
done
for f in "${known_unwrappable[@]}"; do
	if grep -qx "$f" <<<"$used"; then
		echo "wrap_covers: $f is called (allocates inside libc: not swept)"
	fi
done
if ((${#missing[@]})); then
	echo "wrap_covers: the library calls ${missing[*]}, which test_alloc" \
		"does not wrap: add them to SC_ALLOC_WRAPPED" \
		"(tests/CMakeLists.txt) and a __wrap_ to test_alloc.c" >&2
	exit 1
fi
echo "wrap_covers: every allocator the library calls is wrapped ($*)"
