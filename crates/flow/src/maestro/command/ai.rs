//! The commands an AI model runs (`assertWithAI`, `assertNoDefectsWithAI`,
//! `extractTextWithAI`): refused, as a replay has no such model.

use super::super::compat::Status;
use super::Spec;

pub(in crate::maestro) const ASSERT_WITH_AI: Spec = Spec::refused(
    "assertWithAI",
    Status::Refused,
    "an AI model judges the screen: no such model in a replay",
);

pub(in crate::maestro) const ASSERT_NO_DEFECTS_WITH_AI: Spec = Spec::refused(
    "assertNoDefectsWithAI",
    Status::Refused,
    "an AI model judges the screen: no such model in a replay",
);

pub(in crate::maestro) const EXTRACT_TEXT_WITH_AI: Spec = Spec::refused(
    "extractTextWithAI",
    Status::Refused,
    "an AI model reads the screen: no such model in a replay",
);
