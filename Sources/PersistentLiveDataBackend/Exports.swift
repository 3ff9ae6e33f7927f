// The observation core's names are names of this module too: the seam's types subclass and extend them.
@_exported public import PersistentLiveDataCore
