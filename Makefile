# wharf: the two commands are `make demo` and `make check`.
# Every target installs the Debian packages it needs (run as root, or have them installed).
BUILD  ?= build
ASAN   ?= build-asan
RELEASE ?= build-release
TSAN   ?= build-tsan
PREFIX ?= /usr/local
JOBS   ?= $(shell nproc)

BUILD_PKGS = cmake ninja-build pkg-config libfabric-dev libfabric-bin libssl-dev python3 python3-pip gcc gfortran make
TEST_PKGS  = mpich libmpich-dev iproute2 util-linux procps python3-matplotlib perl libopenblas-dev netpipe-mpich2 scalapack-mpi-test libcoarrays-mpich-dev nwchem-mpich libhdf5-mpich-dev bagel yorick-mpy-mpich2 yorick-mpy-common libadios-bin libadios-mpich-dev libbz2-dev libibverbs-dev libglib2.0-0 mocassin mocassin-benchmarks libtachyon-mpich-0 libtachyon-mpich-0-dev tachyon-bin-nox
BENCH_PKGS = mpich libmpich-dev openmpi-bin libopenmpi-dev python3-matplotlib

define need_pkgs
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

.PHONY: all deps build check check-unit check-asan check-tsan check-release check-external demo bench install clean

all: build

deps:
	$(call need_pkgs,$(BUILD_PKGS))

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	ninja -C $(BUILD)

check: build
	$(call need_pkgs,$(TEST_PKGS))
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -LE external
	$(MAKE) --no-print-directory check-release
	$(MAKE) --no-print-directory check-asan
	$(MAKE) --no-print-directory check-tsan

# MPICH's own test suite, unchanged, against wharf (docs/TESTING.md; ~20-50 minutes on
# 2 cores; fetched from Debian's archive, skipped without network).
check-external: build
	$(call need_pkgs,$(TEST_PKGS))
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -L external

# The MPI-level and unit tests once more under AddressSanitizer + UBSan.
check-asan: deps
	cmake -S . -B $(ASAN) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DWHARF_SANITIZE=ON >/dev/null
	ninja -C $(ASAN) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(ASAN) --output-on-failure -j $(JOBS) -L "unit|shm" -LE "nosan"

# The libraries and tools compile warning-free (-Werror) at -O3 too (CMAKE_BUILD_TYPE=Release):
# its inlining finds "may be used uninitialized" cases -O2 does not report.
check-release: deps
	cmake -S . -B $(RELEASE) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	ninja -C $(RELEASE) -j $(JOBS) mpi mpi_compat mpifort wharfrun wharf-info

# The threaded tests (label "thread") under ThreadSanitizer: only the library,
# the launcher and those tests are built.
check-tsan: deps
	cmake -S . -B $(TSAN) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DWHARF_TSAN=ON >/dev/null
	ninja -C $(TSAN) -j $(JOBS) wharfrun mpit_thread_multi mpit_thread_stress
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  ctest --test-dir $(TSAN) --output-on-failure -j $(JOBS) -L thread

demo: build
	$(call need_pkgs,$(TEST_PKGS))
	python3 tools/demo.py --build $(BUILD)

bench: build
	$(call need_pkgs,$(BENCH_PKGS))
	python3 bench/run --build $(BUILD)
	python3 bench/report

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(ASAN) $(TSAN)
