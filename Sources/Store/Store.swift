// The Store component: see ../../README.md and ARCHITECTURE.md.
