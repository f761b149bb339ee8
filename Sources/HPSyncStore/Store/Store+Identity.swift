import Foundation
import HPSyncCrypto
import HPSyncModel

/// The node ID a store stamps on its changes and sends in Hello is always its certificate's.
///
/// The meta row keeps a copy (so that a store without an identity still has an origin), and a
/// copy can go stale: an identity folder copied from another store, or restored from a backup,
/// makes `id` (the certificate) and `status` (the copy) disagree, and `serve` would send a Hello
/// whose node ID every client refuses. The certificate is what peers pin, so it wins.
extension Store {
    /// Adopts the certificate's node ID when the meta row names another one.
    func followCertificate() throws {
        let certified: NodeID?
        do {
            certified = try NodeIdentity.certificateNodeID(in: directory)
        } catch {
            // An unreadable certificate stops every sync with its own message; `verify` names it.
            logger.warning("cannot read this node's certificate", metadata: ["error": "\(error)"])
            return
        }
        guard let certified, certified != nodeID else { return }
        let previous = nodeID
        do {
            try setNodeID(certified)
        } catch {
            logger.warning("cannot adopt the certificate's node ID", metadata: ["error": "\(error)"])
            return
        }
        logger.warning(
            "this store's node ID now follows identity/cert.pem (the identity was replaced); peers must trust the new ID",
            metadata: ["was": "\(previous)", "now": "\(certified)"])
    }

    /// What is wrong with this node's identity, one line each (empty when there is no identity
    /// folder: such a store cannot sync, and every sync command says so).
    func identityProblems() -> [String] {
        let folder = directory.appendingPathComponent("identity", isDirectory: true)
        guard FileManager.default.fileExists(atPath: folder.path) else { return [] }
        let identity: NodeIdentity
        do {
            identity = try NodeIdentity.load(from: directory)
        } catch {
            return ["identity: \(error)"]
        }
        guard identity.nodeID == nodeID else {
            return [
                "identity: the store's node ID \(nodeID) is not its certificate's \(identity.nodeID); "
                    + "run `hp-sync status` as the store's owner to adopt the certificate's"
            ]
        }
        return []
    }
}
