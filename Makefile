# SwiftWing — book-scanning kiosk firmware. `make demo` runs the main job, `make test` passes the tests.
SWIFT ?= swift
PREFIX ?= /usr/local
CONFIGURATION ?= debug
SWIFT_FLAGS ?=
# A target that imports a module it does not name as a dependency fails the build.
IMPORT_CHECK = --explicit-target-dependency-import-check error
BIN = .build/$(CONFIGURATION)/swiftwing
export SWIFT SWIFT_FLAGS

.PHONY: all deps build release test unit-test vm-test demo bench install deb clean

all: build

deps:
	@scripts/install-deps.sh test

build: deps
	$(SWIFT) build -c $(CONFIGURATION) $(IMPORT_CHECK) $(SWIFT_FLAGS)

# The build every way of installing uses (make install and make deb alike): the Swift runtime linked in, so the
# device needs only Debian's libraries and maps no separate libswiftCore/Foundation (Benchmarks/README.md, memory).
release:
	$(MAKE) build CONFIGURATION=release SWIFT_FLAGS="$(SWIFT_FLAGS) --static-swift-stdlib"

# The repository check, unit tests, tests on real files/sockets/processes, then the VM rig on real
# kernel drivers; skipped tests are listed with their reason and the run ends with one count
# (scripts/test.sh says how).
test: deps
	@scripts/install-deps.sh vm
	@scripts/test.sh

unit-test: deps
	@scripts/test.sh repository unit integration

# Exit 77 from the rig alone means QEMU cannot run on this machine at all: reported, not hidden.
vm-test: deps
	@scripts/test.sh vm

demo: build
	scripts/demo.sh $(BIN)

bench: deps
	$(SWIFT) run -c release SwiftWingBench
	$(SWIFT) run -c release TalariaBench
	$(SWIFT) run -c release IdentifyBench
	Benchmarks/TalariaBench/compare-eventsource.sh
	$(SWIFT) build -c release --product UplinkBench
	$(SWIFT) build -c release --product talaria-reference
	.build/release/UplinkBench --scans 50 --drain 500 --delay-ms 100
	$(SWIFT) run -c release ExportBench

# scripts/install.sh: binary, units, udev rules, shelf photos, licences; as root also the swiftwing
# user, the config from the example (when none exists) and the enabled service. DESTDIR stages files only.
install: release
	PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) scripts/install.sh --binary .build/release/swiftwing

# A .deb for this machine's architecture (dpkg-deb, offline) in .build/deb/, from the same build as make install.
deb: release
	scripts/build-deb.sh --binary .build/release/swiftwing

clean:
	rm -rf .build
