//! Skills: saved scripts shared by every run, `skills/<name>.js` in the script root, the
//! description on the first line as a comment. A skill is just code, run under a run's limits.

use serde::Serialize;

use super::runs::Runs;

/// Largest skill, in chars (the same as a script).
pub const MAX_SKILL_CHARS: usize = 100_000;
const MAX_DESCRIPTION_CHARS: usize = 200;

/// One saved skill.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillInfo {
    pub name: String,
    pub description: String,
    pub chars: usize,
}

impl Runs {
    /// Saves a skill (`skills/<name>.js`, its description on the first line).
    pub fn save_skill(&self, name: &str, code: &str, description: &str) -> Result<SkillInfo, String> {
        let text = skill_text(name, code, description)?;
        let dir = self.skills_dir()?;
        // The quota, counting every saved skill but the one this replaces.
        let file = format!("{name}.js");
        let others: Vec<u64> = dir
            .list(&[])?
            .into_iter()
            .filter(|(path, _)| *path != file)
            .map(|(_, bytes)| bytes)
            .collect();
        let limits = self.limits();
        let bytes = others.iter().sum::<u64>() + text.len() as u64;
        if others.len() + 1 > limits.max_skills || bytes > limits.skills_bytes {
            return Err(self.skills_full(others.len(), others.iter().sum::<u64>()));
        }
        self.adopt_skill(name, &text)
    }

    /// Why a skill was refused: the quota, and what the others hold.
    pub fn skills_full(&self, saved: usize, bytes: u64) -> String {
        let limits = self.limits();
        format!(
            "the skills quota is {} skills and {} MiB (--skills-max, --skills-mib); {saved} are saved ({} KiB): remove one (`skills.remove(name)` in a script), or raise the quota",
            limits.max_skills,
            limits.skills_bytes >> 20,
            bytes >> 10
        )
    }

    /// Writes a skill's whole text (`skill_text`, checked already, or read from the store
    /// instances share) as this principal's `skills/<name>.js`, past the quota's check.
    pub fn adopt_skill(&self, name: &str, text: &str) -> Result<SkillInfo, String> {
        check_skill_name(name)?;
        let dir = self.skills_dir()?;
        let file = format!("{name}.js");
        dir.write(&[file], text.as_bytes())?;
        skill_info(name, text).ok_or_else(|| format!("{name:?} is not a skill name"))
    }

    /// Removes this principal's `skills/<name>.js`: whether it was there.
    pub fn remove_skill(&self, name: &str) -> Result<bool, String> {
        check_skill_name(name)?;
        match self.skills_dir()?.remove(&format!("{name}.js")) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(format!("could not remove skill {name:?}: {e}")),
        }
    }

    /// A skill's code (its whole file: the description line is a comment).
    pub fn skill(&self, name: &str) -> Result<String, String> {
        check_skill_name(name)?;
        let dir = self.skills_dir()?;
        dir.read(&[format!("{name}.js")], MAX_SKILL_CHARS as u64 * 4)
            .map_err(|e| {
                if e.starts_with("no file") {
                    let known: Vec<String> = self.skills().into_iter().map(|s| s.name).collect();
                    no_skill(name, &known)
                } else {
                    e
                }
            })
    }

    /// Saved skills, by name.
    pub fn skills(&self) -> Vec<SkillInfo> {
        let Ok(dir) = self.skills_dir() else { return Vec::new() };
        let mut skills: Vec<SkillInfo> = dir
            .list(&[])
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(path, _)| {
                let name = path.strip_suffix(".js")?;
                let text = dir.read(std::slice::from_ref(&path), MAX_SKILL_CHARS as u64 * 4).ok()?;
                skill_info(name, &text)
            })
            .collect();
        skills.sort_by(|a, b| a.name.cmp(&b.name));
        skills
    }
}

/// A skill's whole text (its description on the first line, as a comment), checked: its name,
/// its code's size, a one-line description.
pub fn skill_text(name: &str, code: &str, description: &str) -> Result<String, String> {
    check_skill_name(name)?;
    let chars = code.chars().count();
    if code.trim().is_empty() || chars > MAX_SKILL_CHARS {
        return Err(format!("a skill's code is 1 to {MAX_SKILL_CHARS} chars; got {chars}"));
    }
    let description = description.trim();
    if description.contains('\n') || description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(format!(
            "a skill's description is one line of at most {MAX_DESCRIPTION_CHARS} chars"
        ));
    }
    Ok(format!("// {description}\n{code}"))
}

/// What `script list` shows of a skill, from its name and whole text.
pub fn skill_info(name: &str, text: &str) -> Option<SkillInfo> {
    check_skill_name(name).ok()?;
    let first = text.lines().next().unwrap_or_default();
    Some(SkillInfo {
        name: name.to_string(),
        description: first.strip_prefix("//").unwrap_or_default().trim().to_string(),
        chars: text.chars().count(),
    })
}

/// Why a skill is not among `known`.
pub fn no_skill(name: &str, known: &[String]) -> String {
    format!("no skill named {name:?}; saved skills: {}", list_or_none(known))
}

fn check_skill_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "_-".contains(c));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a skill name: 1 to 64 letters, digits, _ or -, starting with a letter or digit"
        ))
    }
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none yet".to_string()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::runs::{RunLimits, Runs};

    fn runs(dir: &std::path::Path, limits: RunLimits) -> Arc<Runs> {
        Arc::new(Runs::new(Some(dir.to_path_buf()), limits))
    }

    #[test]
    fn skills_are_saved_listed_and_read_back() {
        let tmp = tempfile::tempdir().unwrap();
        let runs = runs(tmp.path(), RunLimits::default());
        runs.save_skill("count-apps", "console.log(1)", "Counts apps").unwrap();
        assert!(runs.save_skill("../x", "1", "").is_err());
        assert!(runs.save_skill("x", "1", "two\nlines").is_err());
        assert_eq!(runs.skills()[0].name, "count-apps");
        assert_eq!(runs.skills()[0].description, "Counts apps");
        assert!(runs.skill("count-apps").unwrap().ends_with("console.log(1)"));
        assert!(runs.skill("nope").unwrap_err().contains("count-apps"));
        let run = runs.start().unwrap();
        assert!(run.read("skills/count-apps.js").unwrap().contains("console.log"));
        assert!(run.write("skills/evil.js", "x").is_err());
    }

    #[test]
    fn each_principal_has_its_own_skills_in_a_folder_its_name_cannot_lead_out_of() {
        let tmp = tempfile::tempdir().unwrap();
        let local = runs(tmp.path(), RunLimits::default());
        let names = ["alice", "Alice", "..", ".", "a.b"];
        for name in names {
            let theirs = local.for_principal(name);
            theirs
                .save_skill("mine", &format!("console.log({name:?})"), "")
                .unwrap();
            assert_eq!(theirs.skills().len(), 1, "{name}: only its own");
        }
        assert!(
            local.skills().is_empty(),
            "stdio's skills are apart from every principal's"
        );
        let mut folders: Vec<String> = std::fs::read_dir(tmp.path().join("principals"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        folders.sort();
        assert_eq!(folders, ["%2E", "%2E%2E", "%41lice", "a%2Eb", "alice"]);
        for name in names {
            let code = local.for_principal(name).skill("mine").unwrap();
            assert!(code.contains(&format!("{name:?}")), "{name}: {code}");
        }
    }
}
