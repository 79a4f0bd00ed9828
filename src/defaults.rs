//! The default futures: the core's futures on the [`Ambient`] handle.

use crate::ambient::Ambient;

/// A default deadline: on the wheel of the runtime it is first polled in, or the global
/// wheel ([`Ambient`]). See [`punctual_core::Deadline`] for the rules.
pub type Deadline<F> = punctual_core::Deadline<'static, F, Ambient>;

/// A default deadline with a name ([`punctual_core::Deadline::named`]). The name is part
/// of the type, so deadlines without one carry no bytes for it.
pub type NamedDeadline<F> = punctual_core::Deadline<'static, F, Ambient, punctual_core::Named>;

/// A default sleep. See [`punctual_core::Sleep`].
pub type Sleep = punctual_core::Sleep<'static, Ambient>;

/// A default budget. See [`punctual_core::Budgeted`].
pub type Budgeted<F> = punctual_core::Budgeted<'static, F, Ambient>;

/// A default whole-stream deadline. See [`punctual_core::StreamDeadline`].
pub type StreamDeadline<S> = punctual_core::StreamDeadline<'static, S, Ambient>;

/// A default idle timeout for a stream. See [`punctual_core::IdleTimeout`].
pub type IdleTimeout<S> = punctual_core::IdleTimeout<'static, S, Ambient>;
