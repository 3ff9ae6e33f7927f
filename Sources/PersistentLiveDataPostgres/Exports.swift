// A shared store's values are LiveData, and a store runs on a PostgresClient in a ServiceGroup: importing
// PersistentLiveDataPostgres brings observers, lifecycles, retention, the decode policies, the client and
// the service group with it.
//
// The target itself stands on the backend seam (PersistentLiveDataBackend); of the SQLite store it uses
// `MirrorFile` alone, for its local cache. `.ci/check-layers` builds it with PLD_LAYER_CHECK defined, which
// leaves the SQLite store's re-export out, so that any other use of it fails to compile.
@_exported public import PersistentLiveDataBackend
@_exported public import PostgresNIO
@_exported public import ServiceLifecycle

#if !PLD_LAYER_CHECK
@_exported public import PersistentLiveData
#endif
