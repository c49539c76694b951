internal import CSesameShims
import FoundationEssentials
import Glibc

/// libsecret and the GLib functions Sesame calls with it, loaded at run time (`dlopen`), so Sesame
/// builds and runs where libsecret is not installed. Loaded once per process; the table is
/// immutable afterwards.
struct LibSecret: @unchecked Sendable {
    // @unchecked: C function pointers, set once in `load()` and only read afterwards.
    typealias GErrorOut = UnsafeMutablePointer<UnsafeMutablePointer<CSesameShims_GError>?>
    typealias Schema = UnsafePointer<CSesameShims_SecretSchema>
    typealias GList = UnsafeMutablePointer<CSesameShims_GList>

    /// The `dlopen` handle (never closed), for symbols looked up later (``SecretServiceWatcher``).
    let handle: UnsafeMutableRawPointer
    let storev: StoreFunction
    let searchv: SearchFunction
    let clearv: ClearFunction
    let retrievableAttributes: HandleToHandle
    let retrievableLabel: HandleToString
    let retrieveSecret: RetrieveFunction
    let valueText: HandleToText
    let valueUnref: HandleToVoid
    let serviceGet: ServiceGetFunction
    let serviceUnlock: UnlockFunction
    let collectionForAlias: AliasFunction
    let collectionLocked: HandleToBool
    let itemType: TypeFunction
    let itemLocked: HandleToBool
    /// `secret_item_get_secret`: the secret a search with `SECRET_SEARCH_LOAD_SECRETS` loaded.
    let itemSecret: HandleToHandle
    let secretErrorQuark: QuarkFunction
    let hashTableNewFull: HashTableNewFunction
    let hashTableInsert: HashTableInsertFunction
    let hashTableGetKeys: HandleToList
    let hashTableLookup: HashTableLookupFunction
    let hashTableUnref: HandleToVoid
    let strHash: UnsafeMutableRawPointer
    let strEqual: UnsafeMutableRawPointer
    let listAppend: ListAppendFunction
    let listFree: ListFreeFunction
    let objectUnref: RawToVoid
    let objectRef: RawToRaw
    let typeCheckInstanceIsA: IsAFunction
    let errorFree: ErrorFreeFunction
    let free: RawToVoid
    let cancellableNew: NewHandle
    let cancellableCancel: HandleToVoid
    let busGet: ServiceGetFunction
    let dbusErrorQuark: QuarkFunction
    let ioErrorQuark: QuarkFunction

    /// The library's file name, as Debian's `libsecret-1-0` installs it.
    static let libraryName = "libsecret-1.so.0"

    /// The loaded library, or why it could not be loaded (once per process).
    static let shared: Result<LibSecret, SesameError> = Result { () throws(SesameError) in try load() }

    private static func load() throws(SesameError) -> LibSecret {
        guard let handle = dlopen(libraryName, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            throw SesameError(
                .credentialStoreUnavailable,
                "the Secret Service needs libsecret (Debian's libsecret-1-0), which could not be loaded: \(reason)"
            )
        }
        var missing: [String] = []
        func symbol<T>(_ name: String, as type: T.Type = T.self) -> T? {
            guard let address = dlsym(handle, name) else {
                missing.append(name)
                return nil
            }
            return unsafeBitCast(address, to: T.self)
        }
        func address(_ name: String) -> UnsafeMutableRawPointer? {
            guard let address = dlsym(handle, name) else {
                missing.append(name)
                return nil
            }
            return address
        }
        func build() -> LibSecret? {
            let storev = symbol("secret_password_storev_sync", as: StoreFunction.self)
            let searchv = symbol("secret_password_searchv_sync", as: SearchFunction.self)
            let clearv = symbol("secret_password_clearv_sync", as: ClearFunction.self)
            let attributes = symbol("secret_retrievable_get_attributes", as: HandleToHandle.self)
            let label = symbol("secret_retrievable_get_label", as: HandleToString.self)
            let retrieve = symbol("secret_retrievable_retrieve_secret_sync", as: RetrieveFunction.self)
            let text = symbol("secret_value_get_text", as: HandleToText.self)
            let valueUnref = symbol("secret_value_unref", as: HandleToVoid.self)
            let serviceGet = symbol("secret_service_get_sync", as: ServiceGetFunction.self)
            let unlock = symbol("secret_service_unlock_sync", as: UnlockFunction.self)
            let alias = symbol("secret_collection_for_alias_sync", as: AliasFunction.self)
            let collectionLocked = symbol("secret_collection_get_locked", as: HandleToBool.self)
            let itemType = symbol("secret_item_get_type", as: TypeFunction.self)
            let itemLocked = symbol("secret_item_get_locked", as: HandleToBool.self)
            let itemSecret = symbol("secret_item_get_secret", as: HandleToHandle.self)
            let secretQuark = symbol("secret_error_get_quark", as: QuarkFunction.self)
            let newFull = symbol("g_hash_table_new_full", as: HashTableNewFunction.self)
            let insert = symbol("g_hash_table_insert", as: HashTableInsertFunction.self)
            let keys = symbol("g_hash_table_get_keys", as: HandleToList.self)
            let lookup = symbol("g_hash_table_lookup", as: HashTableLookupFunction.self)
            let hashUnref = symbol("g_hash_table_unref", as: HandleToVoid.self)
            let strHash = address("g_str_hash")
            let strEqual = address("g_str_equal")
            let append = symbol("g_list_append", as: ListAppendFunction.self)
            let listFree = symbol("g_list_free", as: ListFreeFunction.self)
            let objectUnref = symbol("g_object_unref", as: RawToVoid.self)
            let objectRef = symbol("g_object_ref", as: RawToRaw.self)
            let isA = symbol("g_type_check_instance_is_a", as: IsAFunction.self)
            let errorFree = symbol("g_error_free", as: ErrorFreeFunction.self)
            let gFree = symbol("g_free", as: RawToVoid.self)
            let cancellableNew = symbol("g_cancellable_new", as: NewHandle.self)
            let cancel = symbol("g_cancellable_cancel", as: HandleToVoid.self)
            let busGet = symbol("g_bus_get_sync", as: ServiceGetFunction.self)
            let dbusQuark = symbol("g_dbus_error_quark", as: QuarkFunction.self)
            let ioQuark = symbol("g_io_error_quark", as: QuarkFunction.self)
            guard let storev, let searchv, let clearv, let attributes, let label, let retrieve, let text,
                let valueUnref, let serviceGet, let unlock, let alias, let collectionLocked, let itemType,
                let itemLocked, let itemSecret, let secretQuark, let newFull, let insert, let keys, let lookup,
                let hashUnref,
                let strHash, let strEqual, let append, let listFree, let objectUnref, let objectRef, let isA,
                let errorFree, let gFree, let cancellableNew, let cancel, let busGet, let dbusQuark, let ioQuark
            else { return nil }
            return LibSecret(
                handle: handle,
                storev: storev,
                searchv: searchv,
                clearv: clearv,
                retrievableAttributes: attributes,
                retrievableLabel: label,
                retrieveSecret: retrieve,
                valueText: text,
                valueUnref: valueUnref,
                serviceGet: serviceGet,
                serviceUnlock: unlock,
                collectionForAlias: alias,
                collectionLocked: collectionLocked,
                itemType: itemType,
                itemLocked: itemLocked,
                itemSecret: itemSecret,
                secretErrorQuark: secretQuark,
                hashTableNewFull: newFull,
                hashTableInsert: insert,
                hashTableGetKeys: keys,
                hashTableLookup: lookup,
                hashTableUnref: hashUnref,
                strHash: strHash,
                strEqual: strEqual,
                listAppend: append,
                listFree: listFree,
                objectUnref: objectUnref,
                objectRef: objectRef,
                typeCheckInstanceIsA: isA,
                errorFree: errorFree,
                free: gFree,
                cancellableNew: cancellableNew,
                cancellableCancel: cancel,
                busGet: busGet,
                dbusErrorQuark: dbusQuark,
                ioErrorQuark: ioQuark
            )
        }
        guard let table = build() else {
            // The handle stays open: other symbols may already be in use by the process.
            throw SesameError(
                .credentialStoreUnavailable,
                "\(libraryName) lacks \(missing.joined(separator: ", ")) (Sesame needs libsecret 0.19 or newer)"
            )
        }
        return table
    }

    typealias StoreFunction =
        @convention(c) (
            Schema?, OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            OpaquePointer?, GErrorOut?
        ) -> Int32
    typealias SearchFunction = @convention(c) (Schema?, OpaquePointer?, Int32, OpaquePointer?, GErrorOut?) -> GList?
    typealias ClearFunction = @convention(c) (Schema?, OpaquePointer?, OpaquePointer?, GErrorOut?) -> Int32
    typealias HandleToHandle = @convention(c) (OpaquePointer?) -> OpaquePointer?
    typealias HandleToString = @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    typealias HandleToText = @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    typealias HandleToVoid = @convention(c) (OpaquePointer?) -> Void
    typealias HandleToBool = @convention(c) (OpaquePointer?) -> Int32
    typealias HandleToList = @convention(c) (OpaquePointer?) -> GList?
    typealias RetrieveFunction = @convention(c) (OpaquePointer?, OpaquePointer?, GErrorOut?) -> OpaquePointer?
    typealias ServiceGetFunction = @convention(c) (Int32, OpaquePointer?, GErrorOut?) -> OpaquePointer?
    typealias UnlockFunction =
        @convention(c) (OpaquePointer?, GList?, OpaquePointer?, UnsafeMutablePointer<GList?>?, GErrorOut?) -> Int32
    typealias AliasFunction =
        @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32, OpaquePointer?, GErrorOut?) -> OpaquePointer?
    typealias TypeFunction = @convention(c) () -> UInt
    typealias QuarkFunction = @convention(c) () -> UInt32
    typealias HashTableNewFunction =
        @convention(c) (
            UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?
        )
        -> OpaquePointer?
    typealias HashTableInsertFunction =
        @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Int32
    typealias HashTableLookupFunction = @convention(c) (OpaquePointer?, UnsafeRawPointer?) -> UnsafeMutableRawPointer?
    typealias ListAppendFunction = @convention(c) (GList?, UnsafeMutableRawPointer?) -> GList?
    typealias ListFreeFunction = @convention(c) (GList?) -> Void
    typealias RawToVoid = @convention(c) (UnsafeMutableRawPointer?) -> Void
    typealias RawToRaw = @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?
    typealias IsAFunction = @convention(c) (OpaquePointer?, UInt) -> Int32
    typealias ErrorFreeFunction = @convention(c) (UnsafeMutablePointer<CSesameShims_GError>?) -> Void
    typealias NewHandle = @convention(c) () -> OpaquePointer?
}
