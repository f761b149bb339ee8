/// Padmé, the padding of PURBs (Nikitin et al., "Reducing Metadata Leakage from Encrypted Files and
/// Communication with PURBs", PETS 2019), for the sizes of sealed photos.
///
/// A length L, with E = ⌊log₂ L⌋ and S = ⌊log₂ E⌋ + 1, is rounded up to a multiple of 2^(E − S):
/// its lowest E − S bits are cleared. So a padded size says only O(log log L) bits about L, and the
/// overhead (2^(E − S) − 1) / L stays below 2^−S: at most ~12% for any L (11.6%, its worst, at 129 bytes),
/// below 6.25% from 4 KiB (where photos start, see `StreamLayout`), below 3.2% from 64 KiB.
enum Padme {
    /// The padded length of `length` (≥ 0): the least Padmé size that is at least `length`.
    static func paddedLength(_ length: Int64) -> Int64 {
        precondition(length >= 0, "Padmé of a negative length")
        guard length >= 2 else { return length }
        let exponent = Int64.bitWidth - 1 - length.leadingZeroBitCount  // E = ⌊log₂ L⌋
        let exponentBits = Int.bitWidth - exponent.leadingZeroBitCount  // S = ⌊log₂ E⌋ + 1
        let mask = (Int64(1) << (exponent - exponentBits)) - 1
        return (length + mask) & ~mask
    }
}
