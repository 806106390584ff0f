import Controls
import SwiftWingCore
import Testing

@Suite struct KeyDeviceAllowListTests {
    private let remote = KeyDeviceIdentity(name: "AB Shutter3", vendor: 0x05ac, product: 0x0220)
    private let keyboard = KeyDeviceIdentity(name: "Logitech USB Keyboard", vendor: 0x046d, product: 0xc31c)

    @Test func emptyMeansAnyDeviceWithAShutterKey() {
        let list = KeyDeviceAllowList(parsing: "")
        #expect(list.allowsAny)
        #expect(list.allows(remote) && list.allows(keyboard))
    }

    @Test func namesMatchWithoutRegardToCaseAndIdsByVendorAndProduct() {
        let byName = KeyDeviceAllowList(parsing: "ab shutter3")
        #expect(byName.allows(remote))
        #expect(!byName.allows(keyboard))
        let byID = KeyDeviceAllowList(parsing: " 046D:C31C ")
        #expect(byID.entries == [.vendorProduct(vendor: 0x046d, product: 0xc31c)])
        #expect(byID.allows(keyboard))
        #expect(!byID.allows(remote))
        // A device that only borrows the remote's name with another id is still let in by name:
        // the name is what the person chose to trust.
        let both = KeyDeviceAllowList(parsing: "AB Shutter3, 046d:c31c")
        #expect(both.allows(remote) && both.allows(keyboard))
        #expect(!both.allows(KeyDeviceIdentity(name: "Foot pedal", vendor: 0x1234, product: 0x5678)))
    }

    @Test func somethingThatIsNotAnIDIsAName() {
        #expect(KeyDeviceMatch(parsing: "05ac:22") == .name("05ac:22"))
        #expect(KeyDeviceMatch(parsing: "gpio-keys") == .name("gpio-keys"))
        #expect(KeyDeviceMatch(parsing: "  ") == nil)
        #expect(KeyDeviceMatch.vendorProduct(vendor: 0x5ac, product: 0x220).description == "05ac:0220")
    }
}

@Suite struct PressRateLimitTests {
    private func press(atMilliseconds ms: UInt64) -> ShutterEvent {
        .press(ShutterPress(time: MonotonicInstant(nanoseconds: 1_000_000_000 + ms * 1_000_000), source: .key))
    }

    @Test func onePressPer150MillisecondsFromOneInput() {
        var limit = PressRateLimit()
        // The clock is the events' own timestamps: the test moves it on by choosing them.
        let admitted = [0, 40, 149, 150, 160, 299, 300, 1000].map { limit.admit(press(atMilliseconds: UInt64($0))) }
        #expect(admitted == [true, false, false, true, false, false, true, true])
        #expect(limit.dropped == 4)
    }

    @Test func aLongPressGoesWithItsPress() {
        var limit = PressRateLimit()
        guard case .press(let first) = press(atMilliseconds: 0), case .press(let dropped) = press(atMilliseconds: 50)
        else { return }
        let admitted = [
            limit.admit(.press(first)), limit.admit(.press(dropped)), limit.admit(.longPress(dropped)),
            limit.admit(.longPress(first)),
        ]
        #expect(admitted == [true, false, false, true])
    }

    @Test func aKeyDevicesPressesAreLimitedInTheShutterItself() {
        let shutter = KeyShutter(
            directory: "/nonexistent", keys: [212], allowList: KeyDeviceAllowList(parsing: "AB Shutter3"))
        #expect(shutter.minimumPressIntervalNanoseconds == 150_000_000)
        #expect(shutter.name.contains("AB Shutter3"))
    }
}
