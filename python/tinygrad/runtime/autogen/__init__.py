# tinygrad.runtime.autogen: the reference's generated ctypes bindings of drivers; each module's names raise when used
