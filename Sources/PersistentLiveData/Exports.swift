// Every name of the observation core and of the backend seam is a name of this module too:
// `import PersistentLiveData` gives LiveData, lifecycles, cancellation, keys, versions and errors as before
// they had targets of their own.
@_exported public import PersistentLiveDataBackend
@_exported public import PersistentLiveDataCore
