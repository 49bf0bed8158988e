fn main() {
    tokenpipe_cli::run_anyhow("simserve", tokenpipe_sim::main)
}
