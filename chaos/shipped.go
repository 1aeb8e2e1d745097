package chaos

import chaosconfigs "lockbench/configs/chaos"

// Shipped returns a shipped scenario by name (see ShippedNames).
func Shipped(name string) ([]byte, bool) { return chaosconfigs.Get(name) }

// ShippedNames lists the shipped scenarios.
func ShippedNames() []string { return chaosconfigs.Names() }
