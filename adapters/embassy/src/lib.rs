//! punctual-embassy: work in progress.
#![no_std]
