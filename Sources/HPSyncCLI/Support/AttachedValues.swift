/// `--name=value` words whose value starts with a combining mark, split in two for the parser.
///
/// ArgumentParser splits `--name=value` on the character `=`. A value that starts with a
/// combining mark or a variation selector (`--grep=` and an item name that begins with one)
/// joins the `=` into one character with it, so the split finds no `=` and the whole word is
/// refused as an unknown option (exit 64). Only those words change: `--name` and the value as
/// two words, which the parser reads the same way as the attached form.
enum AttachedValues {
    static func split(_ arguments: [String]) -> [String] {
        var result: [String] = []
        result.reserveCapacity(arguments.count)
        for (index, word) in arguments.enumerated() {
            // After `--` every word is an argument, whatever it looks like.
            if word == "--" {
                result += arguments[index...]
                break
            }
            guard word.hasPrefix("--"), word.firstIndex(of: Character("=")) == nil,
                let equals = word.unicodeScalars.firstIndex(of: "=")
            else {
                result.append(word)
                continue
            }
            let name = String(word.unicodeScalars[..<equals])
            guard name.count > 2,
                name.unicodeScalars.dropFirst(2).allSatisfy({
                    $0.isASCII && ($0 == "-" || $0.properties.isAlphabetic || ("0"..."9").contains($0))
                })
            else {
                result.append(word)
                continue
            }
            result += [name, String(word.unicodeScalars[word.unicodeScalars.index(after: equals)...])]
        }
        return result
    }
}
