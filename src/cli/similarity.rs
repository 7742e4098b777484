//! `engram similarity`: how the model scores pairs of texts, and what their alignment says.

use anyhow::Result;

use engram::config::Config;
use engram::embed::{Embedder, LocalEmbedder};

use crate::app::cycle_settings;

pub fn run(config: &Config, texts: &[String]) -> Result<()> {
    let embedder = LocalEmbedder::load(&config.embedding)?;
    let lexicon = cycle_settings(config)?.lexicon;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embedder.embed(&refs, config.embedding.sub_batch)?;
    let tokens: Vec<_> = refs
        .iter()
        .map(|t| engram::detect::align::statement(t, &lexicon))
        .collect();
    for (i, first) in vectors.iter().enumerate() {
        for (j, second) in vectors.iter().enumerate().skip(i + 1) {
            println!(
                "{:.4}  {:?}  {:?}",
                engram::embed::dot(first, second),
                texts[i],
                texts[j]
            );
            let comparison = engram::detect::align::compare(&tokens[i], &tokens[j], &lexicon);
            println!("        {}", comparison.verdict());
            if !comparison.contradicts()
                && let Some(clause) =
                    engram::detect::align::clause_conflict(&tokens[i], &tokens[j], &lexicon)
            {
                println!("        one clause of each: {}", clause.verdict());
            }
        }
    }
    Ok(())
}
