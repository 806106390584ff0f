/// A resistor the kernel enables on an input line (needs kernel 5.5+ and a driver that can do it).
public enum LineBias: String, Sendable, Equatable, CaseIterable {
    /// Pull-up: a button wired between the pin and GND reads inactive until pressed (with active-low).
    case pullUp = "pull-up"
    case pullDown = "pull-down"
    /// No resistor (an external one is fitted).
    case disabled
    /// Leave whatever the firmware or device tree set.
    case asIs = "as-is"
}
