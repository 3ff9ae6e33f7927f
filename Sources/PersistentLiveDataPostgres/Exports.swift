// A shared store's values are LiveData: importing PersistentLiveDataPostgres brings observers,
// lifecycles, retention and the decode policies with it.
@_exported public import PersistentLiveData
