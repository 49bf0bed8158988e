fn main() {
    tokenpipe_cli::run_anyhow("reduce", tokenpipe_reduce::main)
}
