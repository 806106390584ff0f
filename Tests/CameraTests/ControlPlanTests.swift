import Camera
import Testing

@Suite struct ControlPlanTests {
    let uvcLike: [CameraControl: ControlRange] = [
        .focusAuto: ControlRange(minimum: 0, maximum: 1, defaultValue: 1),
        .focusAbsolute: ControlRange(minimum: 0, maximum: 250, step: 5, defaultValue: 0),
        .exposureAuto: ControlRange(minimum: 0, maximum: 3, defaultValue: 3),
        .exposureAbsolute: ControlRange(minimum: 3, maximum: 2047, defaultValue: 250),
    ]

    @Test func nothingConfiguredSetsNothing() {
        let plan = ControlPlan(controls: CameraControls(), rotation: .none, available: uvcLike)
        #expect(plan.settings.isEmpty)
        #expect(plan.notes.isEmpty)
        #expect(plan.softwareRotationDegrees == 0)
    }

    @Test func absoluteFocusTurnsAutofocusOffFirst() {
        let plan = ControlPlan(controls: CameraControls(focusAbsolute: 40), rotation: .none, available: uvcLike)
        #expect(plan.settings.map(\.control) == [.focusAuto, .focusAbsolute])
        #expect(plan.settings.map(\.value) == [0, 40])
        #expect(plan.notes.isEmpty)
    }

    @Test func outOfRangeIsClampedToTheRangeAndStepWithANote() {
        let plan = ControlPlan(controls: CameraControls(focusAbsolute: 999), rotation: .none, available: uvcLike)
        #expect(plan.settings.last == ControlPlan.Setting(control: .focusAbsolute, value: 250))
        let note = ControlPlan.Note.clamped(
            .focusAbsolute, requested: 999, applied: 250, range: uvcLike[.focusAbsolute]!)
        #expect(plan.notes == [note])
        #expect(note.description.contains("0…250 in steps of 5"))
        let stepped = ControlPlan(controls: CameraControls(focusAbsolute: 42), rotation: .none, available: uvcLike)
        #expect(stepped.settings.last?.value == 40)
    }

    @Test func exposureSwitchesToManualMode() {
        let plan = ControlPlan(controls: CameraControls(exposureAbsolute: 1), rotation: .none, available: uvcLike)
        #expect(plan.settings.map(\.control) == [.exposureAuto, .exposureAbsolute])
        #expect(plan.settings.map(\.value) == [1, 3])  // manual; 1 clamped up to the minimum 3
    }

    @Test func missingControlsAreSkippedWithANote() {
        let plan = ControlPlan(
            controls: CameraControls(focusAuto: true, zoomAbsolute: 200), rotation: .none, available: [:])
        #expect(plan.settings.isEmpty)
        #expect(plan.notes == [.missing(.focusAuto), .missing(.zoomAbsolute)])
        #expect(plan.notes[1].description.contains("zoom_absolute"))
    }

    @Test func rotationUsesTheDriverWhenItCanAndSoftwareOtherwise() {
        let withRotate = ControlPlan(
            controls: CameraControls(), rotation: .halfTurn,
            available: [.rotate: ControlRange(minimum: 0, maximum: 270, step: 90)])
        #expect(withRotate.settings == [ControlPlan.Setting(control: .rotate, value: 180)])
        #expect(withRotate.softwareRotationDegrees == 0)

        let without = ControlPlan(controls: CameraControls(), rotation: .clockwise90, available: uvcLike)
        #expect(without.settings.isEmpty)
        #expect(without.softwareRotationDegrees == 90)
        #expect(without.notes == [.softwareRotation(degrees: 90)])
    }
}
