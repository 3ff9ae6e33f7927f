// Every name of the observation core is a name of this module too: `import PersistentLiveData` gives
// LiveData, lifecycles and cancellation as before they had a target of their own.
@_exported public import PersistentLiveDataCore
