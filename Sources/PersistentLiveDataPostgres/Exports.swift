// A shared store's values are LiveData, and a store runs on a PostgresClient in a ServiceGroup: importing
// PersistentLiveDataPostgres brings observers, lifecycles, retention, the decode policies, the client and
// the service group with it.
@_exported public import PersistentLiveData
@_exported public import PostgresNIO
@_exported public import ServiceLifecycle
