# SwiftWing — book-scanning kiosk firmware. `make demo` runs the main job, `make test` passes the tests.
SWIFT ?= swift
PREFIX ?= /usr/local
CONFIGURATION ?= debug
SWIFT_FLAGS ?=
BIN = .build/$(CONFIGURATION)/swiftwing
export SWIFT SWIFT_FLAGS

.PHONY: all deps build release test unit-test vm-test demo bench install clean

all: build

deps:
	@scripts/install-deps.sh test

build: deps
	$(SWIFT) build -c $(CONFIGURATION) $(SWIFT_FLAGS)

release:
	$(MAKE) build CONFIGURATION=release

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

install: release
	install -D -m 0755 .build/release/swiftwing $(DESTDIR)$(PREFIX)/bin/swiftwing
	install -D -m 0644 systemd/swiftwing.service $(DESTDIR)/etc/systemd/system/swiftwing.service
	install -D -m 0644 udev/70-swiftwing.rules $(DESTDIR)/etc/udev/rules.d/70-swiftwing.rules
	install -D -m 0644 systemd/swiftwing-export@.service $(DESTDIR)/etc/systemd/system/swiftwing-export@.service
	install -D -m 0644 udev/71-swiftwing-export.rules $(DESTDIR)/etc/udev/rules.d/71-swiftwing-export.rules
	install -D -m 0644 config/swiftwing.example.toml $(DESTDIR)/etc/swiftwing/swiftwing.toml.example
	install -d $(DESTDIR)$(PREFIX)/share/swiftwing/shelves
	install -m 0644 Fixtures/shelves/*.jpg Fixtures/shelves/LICENSE Fixtures/shelves/README.md \
		$(DESTDIR)$(PREFIX)/share/swiftwing/shelves/
	install -D -m 0644 LICENSE $(DESTDIR)$(PREFIX)/share/doc/swiftwing/LICENSE
	install -D -m 0644 NOTICE $(DESTDIR)$(PREFIX)/share/doc/swiftwing/NOTICE

clean:
	rm -rf .build
