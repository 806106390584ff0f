// The Controls component: see ../../README.md and ARCHITECTURE.md.
