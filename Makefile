# SwiftWing — book-scanning kiosk firmware. `make demo` runs the main job, `make test` passes the tests.
SWIFT ?= swift
PREFIX ?= /usr/local
CONFIGURATION ?= debug
SWIFT_FLAGS ?=
BIN = .build/$(CONFIGURATION)/swiftwing

.PHONY: all deps build release test unit-test vm-test demo bench install clean

all: build

deps:
	@scripts/install-deps.sh test

build: deps
	$(SWIFT) build -c $(CONFIGURATION) $(SWIFT_FLAGS)

release:
	$(MAKE) build CONFIGURATION=release

# Unit tests, tests on real files/sockets/processes, then the VM rig on real kernel drivers.
test: unit-test vm-test

# Suites that measure time (the HTTP engine's timeouts, the uplink's backoff) get a process of their
# own: in one process with the rest, the synchronous tests (image coding, subprocesses) can hold both
# cooperative threads of a 2-core machine long enough to fail them. The integration tests run the
# real daemon binary as separate processes, also in their own run.
TIMED_SUITES := HTTPEngineTests UplinkTests
unit-test: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	$(SWIFT) test --skip-build $(SWIFT_FLAGS) --skip SwiftWingIntegrationTests $(foreach suite,$(TIMED_SUITES),--skip $(suite))
	$(foreach suite,$(TIMED_SUITES),$(SWIFT) test --skip-build $(SWIFT_FLAGS) --filter $(suite) &&) true
	$(SWIFT) test --skip-build $(SWIFT_FLAGS) --filter SwiftWingIntegrationTests

# Exit 77 from the rig means QEMU cannot run on this machine at all: reported, not hidden, not failed.
vm-test: deps
	@scripts/install-deps.sh vm
	$(SWIFT) build $(SWIFT_FLAGS)
	@scripts/vm/test-all.sh; status=$$?; \
	if [ $$status -eq 77 ]; then echo "vm-test: SKIPPED — QEMU cannot run on this machine (see the [vm] lines above)"; \
	else exit $$status; fi

demo: build
	scripts/demo.sh $(BIN)

bench: deps
	$(SWIFT) run -c release SwiftWingBench
	$(SWIFT) run -c release TalariaBench
	Benchmarks/TalariaBench/compare-eventsource.sh
	$(SWIFT) build -c release --product UplinkBench
	$(SWIFT) build -c release --product talaria-reference
	.build/release/UplinkBench --scans 50 --drain 500 --delay-ms 100
	$(SWIFT) run -c release ExportBench

install: release
	install -D -m 0755 .build/release/swiftwing $(DESTDIR)$(PREFIX)/bin/swiftwing
	install -D -m 0644 systemd/swiftwing.service $(DESTDIR)/etc/systemd/system/swiftwing.service
	install -D -m 0644 udev/70-swiftwing.rules $(DESTDIR)/etc/udev/rules.d/70-swiftwing.rules
	install -D -m 0644 systemd/swiftwing-export@.service $(DESTDIR)/etc/systemd/system/swiftwing-export@.service
	install -D -m 0644 udev/71-swiftwing-export.rules $(DESTDIR)/etc/udev/rules.d/71-swiftwing-export.rules
	install -D -m 0644 config/swiftwing.example.toml $(DESTDIR)/etc/swiftwing/swiftwing.toml.example

clean:
	rm -rf .build
