import Controls
import Foundation
import SwiftWingCore
import SwiftWingTesting
import Synchronization
import Testing

@Suite struct GPIOErrorTests {
    @Test func aMissingChipNamesTheChipsThereAre() {
        let spec = GPIOLineSpec(chip: "no-such-chip-label", line: "SHUTTER", activeLow: true, bias: .pullUp)
        #expect {
            _ = try GPIOInputLine(spec: spec)
        } throws: { error in
            guard let error = error as? GPIOError, case .chipNotFound = error.kind else { return false }
            return error.description.contains("no-such-chip-label") && error.description.contains("gpiodetect")
        }
    }

    @Test func errorsReadLikeAdvice() {
        let spec = GPIOLineSpec(chip: "pinctrl-bcm2835", line: "GPIO17", activeLow: true, bias: .pullUp)
        let permission = GPIOError(kind: .permission, spec: spec, chipName: "gpiochip0").description
        #expect(
            permission.contains("pinctrl-bcm2835 (gpiochip0)") && permission.contains("GPIO17")
                && permission.contains("group `gpio`"))
        let busy = GPIOError(kind: .busy(consumer: "gpio-keys"), spec: spec, chipName: "gpiochip0").description
        #expect(busy.contains("busy (held by \"gpio-keys\")") && busy.contains("GPIO17"))
        let missing = GPIOError(kind: .lineNotFound(chipLines: 54), spec: spec, chipName: "gpiochip0").description
        #expect(missing.contains("no line \"GPIO17\"") && missing.contains("gpioinfo gpiochip0"))
        let none = GPIOError(kind: .chipNotFound(available: []), spec: spec).description
        #expect(none.contains("none (no /dev/gpiochip* at all)"))
    }
}
