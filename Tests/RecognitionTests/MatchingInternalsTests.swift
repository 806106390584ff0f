import Foundation
import Testing

@testable import Recognition

@Suite("Matching internals")
struct MatchingInternalsTests {
    @Test func bitParallelDistanceAgreesWithTheTable() {
        var generator = SeededGenerator(seed: 19)
        // A small alphabet makes near matches common; two letters beyond ASCII take the other path.
        let alphabet: [UInt32] = [0x61, 0x62, 0x63, 0x64, 0x31, 0xE9, 0x4E2D]
        for _ in 0..<2000 {
            let patternLength = Int.random(in: 1...70, using: &generator)
            let textLength = Int.random(in: 0...90, using: &generator)
            let pattern = (0..<patternLength).map { _ in alphabet.randomElement(using: &generator)! }
            let text = (0..<textLength).map { _ in alphabet.randomElement(using: &generator)! }
            #expect(substringDistance(pattern, in: text) == substringDistanceByTable(pattern, in: text))
        }
        let word = Array("musculacion".unicodeScalars.map(\.value))
        #expect(substringDistance(word, in: Array("guiadelamuscu lacion".unicodeScalars.map(\.value))) == 1)
        #expect(substringDistance(word, in: Array("guiadelamusculacion".unicodeScalars.map(\.value))) == 0)
        #expect(substringDistance(word, in: []) == word.count)
    }

    @Test func aSpineOfNumbersAndShortWordsIsALabelOnly() {
        for label in ["434.6 Atl", "JN Gai", "N Ham", "1 1: JN Gai", "91(026) (497.2) Led"] {
            #expect(PreparedSpine(label).labelOnly, "\(label)")
        }
        for titled in ["JN Gai AIMAN", "Ruso", "BULGARIA 91(026) Led", "", "· -"] {
            #expect(!PreparedSpine(titled).labelOnly, "\(titled)")
        }
    }

    @Test func anAuthorMarkIsReadOnlyWhereALabelPrintsIt() {
        #expect(PreparedSpine("Portugal 91(026) (469) Glo").authorMarks == ["glo"])
        #expect(PreparedSpine("Timothée de Fombelle Tobi l JN Fom").authorMarks == ["fom"])
        #expect(PreparedSpine("I** Ánd EL LIBRO").authorMarks == ["and"])
        // A short word of the title after a lower-case word, a mark in lower case, a mark with no label: none.
        #expect(PreparedSpine("Guía del Sur").authorMarks.isEmpty)
        #expect(PreparedSpine("796.42 mor").authorMarks.isEmpty)
        #expect(PreparedSpine("Glo").authorMarks.isEmpty)
    }

    @Test func foldTakesASCIIAndOtherLettersAlike() {
        #expect(Normalisation.fold("ÀB-c··d  É1") == "ab c d e1")
        #expect(Normalisation.fold("--Ærø--") == "aero")
        #expect(Normalisation.fold("ΑΒΓ abc") == "αβγ abc")
    }

    @Test func aCallNumberKeyOutlastsItsMisreadings() {
        let key = Normalisation.callNumberKey(Normalisation.fold("796.42 Mor"))
        #expect(key == "79642m0r")
        #expect(Normalisation.callNumberKey(Normalisation.fold("796,42 M0R")) == key)
        #expect(Normalisation.callNumberKey(Normalisation.fold("JN Sch")) == Normalisation.callNumberKey("in sch"))
        #expect(
            Normalisation.callNumberKey(Normalisation.fold("S9.82 Die")) == Normalisation.callNumberKey("59 82 die"))
        // A label spans several words of the spine, and is found among the others.
        let keys = Normalisation.callNumberKeys(words: Normalisation.words("GUIARAMA ANDORRA 91(026) (46.79) San"))
        #expect(keys.contains(Normalisation.callNumberKey(Normalisation.fold("91(026)(46.79) San"))))
        #expect(keys.contains(Normalisation.callNumberKey("andorra")))
        #expect(!keys.contains { $0.count < 3 })
    }

    @Test func titlePartsCutAtTheFirstSeparator() {
        let parts = Normalisation.titleParts("Memoria / Alan Baddeley : edición = Memory")
        #expect(parts.main == "Memoria")
        #expect(parts.subtitle == "Alan Baddeley : edición = Memory")
        #expect(Normalisation.titleParts("Guía:sin espacios").main == "Guía:sin espacios")
        #expect(Normalisation.titleParts("Títol : ").subtitle == "")
    }

    @Test func aPreparedEntryHoldsEachPartsWordsAndTheirLetters() {
        let entry = CatalogueEntry(
            title: "Guía de la musculación : 200 ejercicios", authors: ["Delavier, Frédéric"], tag: "796.41 Del")
        let stored = PreparedEntry.Stored(entry)
        #expect(stored.main == "guia de la musculacion")
        #expect(stored.subtitle == "200 ejercicios")
        #expect(stored.surnames == "delavier")
        #expect(stored.forenames == "frederic")
        let prepared = PreparedEntry(stored)
        #expect(prepared.words[prepared.mainWords].map(\.text) == ["guia", "de", "la", "musculacion"])
        #expect(prepared.words[prepared.subtitleWords].map(\.text) == ["200", "ejercicios"])
        #expect(prepared.words[prepared.surnames].map(\.text) == ["delavier"])
        let letters = String(scalars: prepared.letters)
        #expect(letters == "guiadelamusculacion200ejerciciosdelavierfrederic")
        #expect(String(scalars: Array(prepared.letters[prepared.mainLetters])) == "guiadelamusculacion")
        for word in prepared.words {
            #expect(String(scalars: Array(prepared.letters[word.letters])) == word.text)
        }
        #expect(String(scalars: prepared.tagCompact) == "79641del")
    }

    @Test func theBestIdsAreTheTopOfTheFullOrder() {
        var generator = SeededGenerator(seed: 7)
        for limit in [0, 1, 5, 48] {
            var weights: [Int64: Double] = [:]
            for id in 1...Int64.random(in: 1...400, using: &generator) {
                // Coarse weights, so ties (broken by the lower id) are common.
                weights[id] = Double(Int.random(in: 0...20, using: &generator)) / 4
            }
            let full = weights.sorted { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }
            #expect(CatalogueIndex.best(weights, limit: limit) == Array(full.prefix(limit).map(\.key)))
        }
    }
}
