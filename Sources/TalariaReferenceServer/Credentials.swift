/// Whether two credentials are the same, compared as UTF-8 bytes in a time that depends on their lengths only,
/// never on where they first differ: a guesser on the network learns nothing from how long a refusal takes.
/// Unlike `String ==`, spellings that are canonically equivalent but differ in bytes ("é" precomposed or as "e"
/// and a combining accent) are different credentials.
package func credentialsEqual(_ given: String, _ expected: String) -> Bool {
    let given = Array(given.utf8)
    let expected = Array(expected.utf8)
    // Every byte of the expected value is read whatever the given one holds; a length mismatch alone is enough.
    var difference = given.count ^ expected.count
    for index in expected.indices {
        let byte = index < given.count ? given[index] : 0
        difference |= Int(byte ^ expected[index])
    }
    return difference == 0
}
