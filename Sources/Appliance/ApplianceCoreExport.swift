// The configuration, control messages and client, library management and reports live in ApplianceCore, which
// links none of the device's C libraries (so swiftwing-web need not); every user of Appliance keeps seeing them.
@_exported import ApplianceCore
