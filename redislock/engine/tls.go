package engine

import "lockbench/internal/tlsfiles"

// TLSFiles are the files and switches for rediss:// masters
// (tlsfiles.Files, which every service's client shares).
type TLSFiles = tlsfiles.Files
