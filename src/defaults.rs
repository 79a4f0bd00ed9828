//! The default futures: the core's futures on the [`DefaultWheel`] handle.

use crate::default_wheel::DefaultWheel;

/// A default deadline: on the wheel of the runtime it is first polled in, or the global
/// wheel ([`DefaultWheel`]). See [`punctual_core::Deadline`] for the rules.
pub type Deadline<F> = punctual_core::Deadline<'static, F, DefaultWheel>;

/// A default deadline with a name ([`punctual_core::Deadline::named`]). The name is part
/// of the type, so deadlines without one carry no bytes for it.
pub type NamedDeadline<F> = punctual_core::Deadline<'static, F, DefaultWheel, punctual_core::Named>;

/// A default sleep. See [`punctual_core::Sleep`].
pub type Sleep = punctual_core::Sleep<'static, DefaultWheel>;

/// A default budget. See [`punctual_core::Budgeted`].
pub type Budgeted<F> = punctual_core::Budgeted<'static, F, DefaultWheel>;

/// A default whole-stream deadline. See [`punctual_core::StreamDeadline`].
pub type StreamDeadline<S> = punctual_core::StreamDeadline<'static, S, DefaultWheel>;

/// A default idle timeout for a stream. See [`punctual_core::IdleTimeout`].
pub type IdleTimeout<S> = punctual_core::IdleTimeout<'static, S, DefaultWheel>;
